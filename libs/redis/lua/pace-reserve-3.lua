--[[
  Reserves the next send slot of an account's pace (GCRA) and, for platforms that limit each
  chat too (Telegram groups: 20/min), of that chat's pace, for the holder of the account's
  lock only. It reserves a slot up to ARGV[6] ms ahead, so a caller sleeps
  once until its slot instead of asking again and again; a slot reserved and not used only
  makes the account slower, never faster. The state is each pace's theoretical arrival time
  (TAT) in Redis, shared by every replica and kept across restarts.
  KEYS[1] account pace key
  KEYS[2] account lock key
  KEYS[3] chat pace key (unused when ARGV[5] is 0)
  ARGV[1] now, ms (the caller's clock)
  ARGV[2] account emission interval, ms (60000 / sends per minute); 0 = reserve the chat's
          pace only (the account's slot was reserved before the chat was known)
  ARGV[3] account burst: sends allowed back to back
  ARGV[4] lock token
  ARGV[5] chat emission interval, ms; 0 = this platform has no per-chat pace
  ARGV[6] longest wait the caller accepts, ms
  returns {0, W}: a slot is reserved, send in W ms
          {1, W}: the account's next slot is W ms away (more than ARGV[6]); nothing reserved
          {2, W}: the chat's next slot is W ms away (more than ARGV[6]); nothing reserved
          {-1, 0}: the lock is not held with this token
]]
if redis.call('GET', KEYS[2]) ~= ARGV[4] then
  return {-1, 0}
end
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local chat_interval = tonumber(ARGV[5])
local max_wait = tonumber(ARGV[6])

local tat = now
local account_wait = 0
if interval > 0 then
  tat = tonumber(redis.call('GET', KEYS[1]) or '0')
  if tat < now then tat = now end
  account_wait = tat + interval - burst * interval - now
  if account_wait < 0 then account_wait = 0 end
end

local chat_tat = now
local chat_wait = 0
if chat_interval > 0 then
  chat_tat = tonumber(redis.call('GET', KEYS[3]) or '0')
  if chat_tat < now then chat_tat = now end
  chat_wait = chat_tat - now
end

local wait = math.max(account_wait, chat_wait)
if wait > max_wait then
  if chat_wait > account_wait then return {2, math.ceil(chat_wait)} end
  return {1, math.ceil(account_wait)}
end

local at = now + wait
if interval > 0 then
  local new_tat = math.max(tat, at) + interval
  redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil(new_tat - now) + 1000)
end
if chat_interval > 0 then
  local new_chat_tat = at + chat_interval
  redis.call('SET', KEYS[3], new_chat_tat, 'PX', math.ceil(new_chat_tat - now) + 1000)
end
return {0, math.ceil(wait)}
