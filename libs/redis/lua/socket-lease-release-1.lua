--[[
  Gives up a socket lease held by this id (compare-and-delete), once its socket is closed.
  KEYS[1] socket lease key
  ARGV[1] holder id
  returns 1 when released, -1 when this id did not hold it
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return -1
