--[[
  Takes one send token from an account's pace (GCRA), but only for the holder of the
  account's lock, so a holder that lost its lock (paused process, expired lease) cannot send.
  The state is the theoretical arrival time (TAT) of the next send; it lives in Redis, so every
  replica and every restart shares it.
  KEYS[1] pace key
  KEYS[2] account lock key
  ARGV[1] now, ms (the caller's clock)
  ARGV[2] emission interval, ms (60000 / sends per minute)
  ARGV[3] burst: sends allowed back to back
  ARGV[4] lock token
  returns 0 when a send may happen now (the token is taken),
          N > 0: wait N ms then ask again (nothing taken),
          -1: the lock is not held with this token
]]
if redis.call('GET', KEYS[2]) ~= ARGV[4] then
  return -1
end
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - burst * interval
if allow_at > now then
  return math.ceil(allow_at - now)
end
redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil(new_tat - now) + 1000)
return 0
