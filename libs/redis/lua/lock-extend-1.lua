--[[
  Extends a lock held with this token.
  KEYS[1] lock key
  ARGV[1] token
  ARGV[2] time to live, ms
  returns 1 when extended, -1 when the token no longer holds the lock
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return -1
