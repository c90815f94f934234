--[[
  Reserves one message to a chat under the account's chat windows (libs/core chatWindows: caps
  on what one chat gets from the account, whichever campaign sends), for the holder of the
  account's lock only. A chat's messages are a sorted set (score: time, ms; member: the run, so a
  run's message counts once however often its target is put back and reserved again). The
  account's marker says every chat's set was rebuilt from PostgreSQL after Redis lost them
  (chat-limits-seed-2, chat-limits-seeded-2); without it nothing is reserved.
  KEYS[1] chat sends key (sorted set)
  KEYS[2] account lock key
  KEYS[3] account chat sends marker
  ARGV[1] now, ms
  ARGV[2] lock token
  ARGV[3] member naming this message (its run)
  ARGV[4] how long a chat's messages are kept, ms (the longest window a limit may have)
  ARGV[5..] the windows, in pairs: count, length ms
  returns {CODE.OK, 0}: reserved, or already counted for this member
          {CODE.CAP_MET, W, I}: window I (from 1) is full; it frees a message in W ms
          {CODE.REBUILD, 0}: the marker is not there: rebuild, then ask again
          {CODE.NOT_HOLDER, 0}: the lock is not held with this token
]]
if redis.call('GET', KEYS[2]) ~= ARGV[2] then
  return {CODE.NOT_HOLDER, 0}
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  return {CODE.REBUILD, 0}
end
local now = tonumber(ARGV[1])
local keep = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - keep))
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then
  return {CODE.OK, 0}
end
for i = 5, #ARGV - 1, 2 do
  local count = tonumber(ARGV[i])
  local window = tonumber(ARGV[i + 1])
  local n = redis.call('ZCOUNT', KEYS[1], '(' .. (now - window), '+inf')
  if n >= count then
    -- it frees when the (n - count + 1)-th oldest message in the window leaves it
    local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', n - count, 1)
    return {CODE.CAP_MET, math.max(1, math.ceil(tonumber(oldest[2]) + window - now)), (i - 3) / 2}
  end
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[3], keep + 60000)
return {CODE.OK, 0}
