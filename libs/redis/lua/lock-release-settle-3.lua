--[[
  Ends a job's hold on its account in one call: moves the account's pace times to at least the
  floors given, then gives up the account lock if this token holds it (compare-and-delete).
  Slots are reserved ahead; a send that went out late would otherwise let the account's next
  job, on any replica, start one lateness too early. The floors are moved whether or not the
  lock is still held: a lock that vanished with a Redis restart took the pace with it, and the
  next job must find it put back. Moving a pace time only ever makes the account slower.
  KEYS[1] account lock key
  KEYS[2] account pace key: the GCRA theoretical arrival time (pace-reserve-3)
  KEYS[3] account gap key: the human gap (pace-reserve-safe-6), for accounts with
          sendDelaySeconds only
  ARGV[1] lock token
  ARGV[2] now, ms (the caller's clock)
  ARGV[3] earliest next send by the pace, ms (0: leave the pace as it is)
  ARGV[4] earliest next send by the human gap, ms (0: leave the gap as it is)
  returns CODE.OK when the lock was released, CODE.NOT_HOLDER when the token did not hold it
]]
local now = tonumber(ARGV[2])

local function move_to(key, floor)
  if floor <= now then return end
  local current = tonumber(redis.call('GET', key) or '0')
  if floor <= current then return end
  redis.call('SET', key, floor, 'PX', math.ceil(floor - now) + 1000)
end

move_to(KEYS[2], tonumber(ARGV[3]))
move_to(KEYS[3], tonumber(ARGV[4]))
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return CODE.OK
end
return CODE.NOT_HOLDER
