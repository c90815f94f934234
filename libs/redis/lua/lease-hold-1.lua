--[[
  Takes or keeps a leader lease.
  KEYS[1] lease key
  ARGV[1] holder id
  ARGV[2] time to live, ms
  returns 1 when newly taken, 2 when renewed (already held by this id), 0 when another holds it
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 2
end
if holder then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
