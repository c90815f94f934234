--[[
  Marks an account's chat sends rebuilt (chat-limits-seed-2, every chat done) for the holder of
  its lock only; the marker outlives every chat's set, so a set missing under it held nothing.
  KEYS[1] account chat sends marker
  KEYS[2] account lock key
  ARGV[1] lock token
  ARGV[2] how long a chat's messages are kept, ms
  returns CODE.OK, or CODE.NOT_HOLDER when the lock is not held with this token
]]
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return CODE.NOT_HOLDER
end
redis.call('SET', KEYS[1], '1', 'PX', tonumber(ARGV[2]) + 60000)
return CODE.OK
