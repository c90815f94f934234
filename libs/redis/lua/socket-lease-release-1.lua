--[[
  Gives up a socket lease held by this id (compare-and-delete), once its socket is closed.
  KEYS[1] socket lease key
  ARGV[1] holder id
  returns CODE.OK when released, CODE.NOT_HOLDER when this id did not hold it
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return CODE.OK
end
return CODE.NOT_HOLDER
