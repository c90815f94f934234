--[[
  Releases a lock only if this token holds it (compare-and-delete).
  KEYS[1] lock key
  ARGV[1] token
  returns CODE.OK when released, CODE.NOT_HOLDER when the token did not hold it
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return CODE.OK
end
return CODE.NOT_HOLDER
