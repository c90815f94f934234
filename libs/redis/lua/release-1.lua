--[[
  Gives up a lock or lease only if this token holds it (compare-and-delete): the account lock,
  the scheduler's leader lease (so a standby takes over at once), or a socket lease once its
  socket is closed.
  KEYS[1] lock or lease key
  ARGV[1] token, or holder id
  returns CODE.OK when released, CODE.NOT_HOLDER when the token did not hold it
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return CODE.OK
end
return CODE.NOT_HOLDER
