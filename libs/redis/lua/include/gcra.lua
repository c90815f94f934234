--[[
  The GCRA pace shared by pace-reserve-3 and pace-reserve-safe-6, written once and put into
  each of them by the loader (`--#include gcra.lua`; see src/script-source.ts). Each pace is a
  theoretical arrival time (TAT, ms) in Redis, shared by every replica and kept across restarts.
  Both scripts open with the same KEYS[1..3] and ARGV[1..6]:
  KEYS[1] account pace key, KEYS[2] account lock key, KEYS[3] chat pace key;
  ARGV[1] now, ARGV[2] account interval, ARGV[3] account burst, ARGV[4] lock token,
  ARGV[5] chat interval, ARGV[6] longest wait (see pace-reserve-3 for each one's meaning).
]]

-- True when the caller's token holds the account's lock: only the holder may reserve.
local function holds_account_lock()
  return redis.call('GET', KEYS[2]) == ARGV[4]
end

-- The pace request the scripts share (ARGV[1..6] above), as numbers.
local function pace_request()
  return {
    now = tonumber(ARGV[1]),
    interval = tonumber(ARGV[2]),
    burst = tonumber(ARGV[3]),
    chat_interval = tonumber(ARGV[5]),
    max_wait = tonumber(ARGV[6]),
  }
end

-- The account's TAT and how long until the account's and the chat's next slots. The account
-- allows `burst` sends back to back, the chat one; an interval of 0 leaves that pace out.
local function pace_waits(p)
  local tat = p.now
  local account_wait = 0
  if p.interval > 0 then
    tat = tonumber(redis.call('GET', KEYS[1]) or '0')
    if tat < p.now then tat = p.now end
    account_wait = tat + p.interval - p.burst * p.interval - p.now
    if account_wait < 0 then account_wait = 0 end
  end
  local chat_wait = 0
  if p.chat_interval > 0 then
    local chat_tat = tonumber(redis.call('GET', KEYS[3]) or '0')
    if chat_tat < p.now then chat_tat = p.now end
    chat_wait = chat_tat - p.now
  end
  return tat, account_wait, chat_wait
end

-- The reply when the next slot is further away than the caller waits, naming the pace that
-- holds it back; nil when the caller waits that long.
local function beyond_longest_wait(p, account_wait, chat_wait)
  if math.max(account_wait, chat_wait) > p.max_wait then
    if chat_wait > account_wait then return {CODE.CHAT_WAIT, math.ceil(chat_wait)} end
    return {CODE.ACCOUNT_WAIT, math.ceil(account_wait)}
  end
  return nil
end

-- Takes the slot at `at`: each asked pace's TAT moves one interval past it.
local function take_pace_slot(p, tat, at)
  if p.interval > 0 then
    local new_tat = math.max(tat, at) + p.interval
    redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil(new_tat - p.now) + 1000)
  end
  if p.chat_interval > 0 then
    local new_chat_tat = at + p.chat_interval
    redis.call('SET', KEYS[3], new_chat_tat, 'PX', math.ceil(new_chat_tat - p.now) + 1000)
  end
end
