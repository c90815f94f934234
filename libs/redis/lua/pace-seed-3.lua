--[[
  Rebuilds an account's sends set (see pace-reserve-safe-6) from what PostgreSQL recorded,
  after Redis lost it, for the holder of the account's lock only. A set already rebuilt is
  left as it is: only the first rebuild after a loss counts.
  KEYS[1] account sends key (sorted set)
  KEYS[2] account gap key
  KEYS[3] account lock key
  ARGV[1] now, ms
  ARGV[2] lock token
  ARGV[3] the earliest time of the account's next send, ms (0: none)
  ARGV[4..] the times of the account's sends in the last 24 hours, ms
  returns CODE.OK when rebuilt, CODE.UNCHANGED when it already was,
          CODE.NOT_HOLDER when the lock is not held with this token
]]
if redis.call('GET', KEYS[3]) ~= ARGV[2] then
  return CODE.NOT_HOLDER
end
if redis.call('ZSCORE', KEYS[1], 'seeded') then
  return CODE.UNCHANGED
end
local now = tonumber(ARGV[1])
redis.call('ZADD', KEYS[1], 0, 'seeded')
for i = 4, #ARGV do
  redis.call('ZADD', KEYS[1], tonumber(ARGV[i]), 'pg:' .. i)
end
redis.call('PEXPIRE', KEYS[1], 90000000)
local next_at = tonumber(ARGV[3])
local gap = tonumber(redis.call('GET', KEYS[2]) or '0')
if next_at > gap and next_at > now then
  redis.call('SET', KEYS[2], next_at, 'PX', math.ceil(next_at - now) + 1000)
end
return CODE.OK
