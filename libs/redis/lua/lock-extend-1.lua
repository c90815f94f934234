--[[
  Extends a lock held with this token.
  KEYS[1] lock key
  ARGV[1] token
  ARGV[2] time to live, ms
  returns CODE.OK when extended, CODE.NOT_HOLDER when the token no longer holds the lock
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return CODE.OK
end
return CODE.NOT_HOLDER
