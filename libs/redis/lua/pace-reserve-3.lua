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
  returns {CODE.OK, W}: a slot is reserved, send in W ms
          {CODE.ACCOUNT_WAIT, W}: the account's next slot is W ms away (more than ARGV[6]);
            nothing reserved
          {CODE.CHAT_WAIT, W}: the chat's next slot is W ms away (more than ARGV[6]); nothing
            reserved
          {CODE.NOT_HOLDER, 0}: the lock is not held with this token
]]
--#include gcra.lua

if not holds_account_lock() then
  return {CODE.NOT_HOLDER, 0}
end
local p = pace_request()
local tat, account_wait, chat_wait = pace_waits(p)
local beyond = beyond_longest_wait(p, account_wait, chat_wait)
if beyond then return beyond end

local wait = math.max(account_wait, chat_wait)
take_pace_slot(p, tat, p.now + wait)
return {CODE.OK, math.ceil(wait)}
