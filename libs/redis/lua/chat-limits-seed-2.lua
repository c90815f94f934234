--[[
  Puts back one chat's messages from PostgreSQL's record after Redis lost them (see
  chat-limits-reserve-3), for the holder of the account's lock only. Members are runs, so a
  message already there, or seeded twice, counts once.
  KEYS[1] chat sends key (sorted set)
  KEYS[2] account lock key
  ARGV[1] lock token
  ARGV[2] how long a chat's messages are kept, ms
  ARGV[3..] the messages, in pairs: time ms, member
  returns CODE.OK, or CODE.NOT_HOLDER when the lock is not held with this token
]]
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return CODE.NOT_HOLDER
end
for i = 3, #ARGV - 1, 2 do
  redis.call('ZADD', KEYS[1], 'NX', tonumber(ARGV[i]), ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return CODE.OK
