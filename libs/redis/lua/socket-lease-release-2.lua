--[[
  Gives up a socket lease once its socket is closed, if this holder has it, and marks it released
  for the next taker (socket-lease-acquire-3): no socket of this holder is left to wait out. The
  mark goes with the lease's data: after a flush the next taker waits a renewal out again.
  KEYS[1] socket lease key
  KEYS[2] released mark
  ARGV[1] holder id
  ARGV[2] the mark's time to live, ms
  returns CODE.OK when released, CODE.NOT_HOLDER when this holder did not have it
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
  return CODE.OK
end
return CODE.NOT_HOLDER
