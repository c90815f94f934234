--[[
  Moves one of an account's pace times to at least ARGV[2]: the moment the account may send
  again, judged by when its last request was really written. Slots are reserved ahead; a send
  that went out late would otherwise let the account's next job, on any replica, start one
  lateness too early. Once per job, for each of these keys:
  - the account pace key: the GCRA theoretical arrival time (pace-reserve-3);
  - the account gap key: the human gap (pace-reserve-safe-6), for accounts with
    sendDelaySeconds only.
  KEYS[1] account pace key, or account gap key
  ARGV[1] now, ms (the caller's clock)
  ARGV[2] earliest next send, ms
  returns CODE.OK when the time moved, CODE.UNCHANGED when it already was as late
]]
local now = tonumber(ARGV[1])
local floor = tonumber(ARGV[2])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if floor <= current or floor <= now then
  return CODE.UNCHANGED
end
redis.call('SET', KEYS[1], floor, 'PX', math.ceil(floor - now) + 1000)
return CODE.OK
