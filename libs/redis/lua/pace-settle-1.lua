--[[
  Moves an account's pace (GCRA theoretical arrival time) to at least ARGV[2]: the moment the
  account may send again, judged by when its last request was really written. Slots are
  reserved ahead; a send that went out late would otherwise let the account's next job, on any
  replica, start one lateness too early.
  KEYS[1] account pace key
  ARGV[1] now, ms (the caller's clock)
  ARGV[2] earliest next send, ms
  returns CODE.OK when the pace moved, CODE.UNCHANGED when it already was as late
]]
local now = tonumber(ARGV[1])
local floor = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if floor <= tat or floor <= now then
  return CODE.UNCHANGED
end
redis.call('SET', KEYS[1], floor, 'PX', math.ceil(floor - now) + 1000)
return CODE.OK
