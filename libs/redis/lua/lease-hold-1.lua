--[[
  Takes or keeps a leader lease.
  KEYS[1] lease key
  ARGV[1] holder id
  ARGV[2] time to live, ms
  returns CODE.TAKEN when newly taken, CODE.HELD when renewed (already held by this id),
          CODE.BUSY when another holds it
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return CODE.HELD
end
if holder then
  return CODE.BUSY
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return CODE.TAKEN
