--[[
  Keeps a socket lease held by this id, and tells the holder whether another replica asked for
  a hand-over. A lease that vanished (expired, or Redis lost its data) is taken back unless a
  hand-over was asked meanwhile: the socket is still open, and nobody else may open one.
  KEYS[1] socket lease key
  KEYS[2] hand-over request key
  ARGV[1] holder id
  ARGV[2] lease time to live, ms
  returns CODE.HELD when held, CODE.HANDOVER when held and another holder asked for a
          hand-over, CODE.NOT_HOLDER when lost (another holder has it, or is owed it)
]]
local holder = redis.call('GET', KEYS[1])
local asker = redis.call('GET', KEYS[2])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if asker and asker ~= ARGV[1] then return CODE.HANDOVER end
  return CODE.HELD
end
if holder or (asker and asker ~= ARGV[1]) then
  return CODE.NOT_HOLDER
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return CODE.HELD
