--[[
  pace-reserve-3 for an account with ban-safety limits (human pacing, hourly and daily caps),
  in the same one round trip per send: the GCRA slot, the human gap after the account's
  previous send, and the caps over rolling windows are checked and reserved together, for the
  holder of the account's lock only. Accounts without these limits use pace-reserve-3.
  The account's sends are a sorted set (score: the slot's time, ms) shared by every replica.
  Its member 'seeded' (score 0, never in a window) says the set was rebuilt from PostgreSQL
  after Redis lost it; without it nothing is reserved and the caller rebuilds it first
  (pace-seed-3), so a flushed Redis never lets an account start over with empty windows.
  The caps' windows are judged one second wider than an hour and a day (WINDOW_MARGIN).
  KEYS[1] account pace key
  KEYS[2] account lock key
  KEYS[3] chat pace key (unused when ARGV[5] is 0)
  KEYS[4] account sends key (sorted set)
  KEYS[5] account gap key: the earliest time of the account's next send, ms
  KEYS[6] account cap key: when a capped account's next slot frees, ms (for the API's `waiting`)
  ARGV[1] now, ms (the caller's clock)
  ARGV[2] account emission interval, ms; 0 = reserve the chat's pace only
  ARGV[3] account burst
  ARGV[4] lock token
  ARGV[5] chat emission interval, ms; 0 = none
  ARGV[6] longest wait the caller accepts, ms
  ARGV[7] the gap after this send, ms (drawn by the caller: sendDelaySeconds); 0 = none
  ARGV[8] hourly cap (sends in any rolling hour); 0 = none
  ARGV[9] daily cap (sends in any rolling 24 hours); 0 = none
  ARGV[10] a member naming this send, unique
  returns {CODE.OK, W}: a slot is reserved, send in W ms
          {CODE.ACCOUNT_WAIT, W}: the account's next slot (pace or gap) is W ms away (more
            than ARGV[6])
          {CODE.CHAT_WAIT, W}: the chat's next slot is W ms away (more than ARGV[6])
          {CODE.CAP_MET, W}: a cap is met; its window frees a slot in W ms; nothing reserved
          {CODE.REBUILD, 0}: the sends set is not there: rebuild it (pace-seed-3), then ask again
          {CODE.NOT_HOLDER, 0}: the lock is not held with this token
]]
--#include gcra.lua

local HOUR = 3600000
local DAY = 86400000
-- Each window is judged this much wider than it is: a request is received some time after its
-- slot, and two requests' delays differ, so a window as the platform sees it may hold a send
-- whose slot was just outside it.
local WINDOW_MARGIN = 1000
if not holds_account_lock() then
  return {CODE.NOT_HOLDER, 0}
end
if not redis.call('ZSCORE', KEYS[4], 'seeded') then
  return {CODE.REBUILD, 0}
end
local p = pace_request()
local now = p.now
local gap_after = tonumber(ARGV[7])
local hourly_cap = tonumber(ARGV[8])
local daily_cap = tonumber(ARGV[9])

local tat, account_wait, chat_wait = pace_waits(p)
if p.interval > 0 then
  local gap = tonumber(redis.call('GET', KEYS[5]) or '0')
  if gap - now > account_wait then account_wait = gap - now end
end

local wait = math.max(account_wait, chat_wait)
local at = now + wait

-- Caps, judged at the slot: sends after at - window (slots reserved ahead count too).
redis.call('ZREMRANGEBYSCORE', KEYS[4], '(0', now - DAY - WINDOW_MARGIN)
local frees = 0
local function cap_frees(cap, window)
  if cap <= 0 then return 0 end
  window = window + WINDOW_MARGIN
  local n = redis.call('ZCOUNT', KEYS[4], '(' .. (at - window), '+inf')
  if n < cap then return 0 end
  -- the slot frees when the (n - cap + 1)-th of them leaves the window
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. (at - window), '+inf', 'WITHSCORES', 'LIMIT', n - cap, 1)
  return tonumber(oldest[2]) + window
end
if p.interval > 0 then
  frees = math.max(cap_frees(hourly_cap, HOUR), cap_frees(daily_cap, DAY))
end
if frees > at then
  redis.call('SET', KEYS[6], frees, 'PX', math.ceil(frees - now) + 1000)
  return {CODE.CAP_MET, math.ceil(frees - now)}
end

local beyond = beyond_longest_wait(p, account_wait, chat_wait)
if beyond then return beyond end

take_pace_slot(p, tat, at)
if p.interval > 0 then
  redis.call('ZADD', KEYS[4], at, ARGV[10])
  redis.call('PEXPIRE', KEYS[4], DAY + HOUR)
  if gap_after > 0 then
    redis.call('SET', KEYS[5], at + gap_after, 'PX', math.ceil(at + gap_after - now) + 1000)
  end
end
return {CODE.OK, math.ceil(wait)}
