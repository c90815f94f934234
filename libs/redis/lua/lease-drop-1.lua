--[[
  Gives up a leader lease held by this id (compare-and-delete), so a standby takes over at once.
  KEYS[1] lease key
  ARGV[1] holder id
  returns CODE.OK when dropped, CODE.NOT_HOLDER when not held by this id
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return CODE.OK
end
return CODE.NOT_HOLDER
