--[[
  Reserves up to ARGV[7] consecutive slots of an account's pace (GCRA) at once, for the holder
  of the account's lock only: the job's lanes that asked for a slot together (the sender's
  pace batches), one call instead of one each. Each slot is reserved as pace-reserve-3 would
  reserve it alone, one after the other, and only while it is at most ARGV[6] ms ahead; the
  account's per-chat pace is not asked (first parts, whose chats are claimed at their slots).
  KEYS[1] account pace key
  KEYS[2] account lock key
  KEYS[3] chat pace key (unused: ARGV[5] is 0)
  ARGV[1] now, ms (the caller's clock)
  ARGV[2] account emission interval, ms (60000 / sends per minute)
  ARGV[3] account burst: sends allowed back to back
  ARGV[4] lock token
  ARGV[5] 0 (no per-chat pace; kept so the shared GCRA reads its arguments where it expects)
  ARGV[6] longest wait the caller accepts, ms
  ARGV[7] how many slots, at least 1
  returns {CODE.OK, W1, W2, …}: the slots reserved, send in W1, W2… ms (at least one)
          {CODE.ACCOUNT_WAIT, W}: the account's next slot is W ms away (more than ARGV[6]);
            nothing reserved
          {CODE.NOT_HOLDER, 0}: the lock is not held with this token
  The shared GCRA can also answer {CODE.CHAT_WAIT, W}, for a chat pace this script never asks.
]]
--#include gcra.lua

if not holds_account_lock() then
  return {CODE.NOT_HOLDER, 0}
end
local p = pace_request()
local reply = {CODE.OK}
for _ = 1, tonumber(ARGV[7]) do
  local tat, account_wait = pace_waits(p)
  if account_wait > p.max_wait then
    if #reply == 1 then return {CODE.ACCOUNT_WAIT, math.ceil(account_wait)} end
    break
  end
  take_pace_slot(p, tat, p.now + account_wait)
  reply[#reply + 1] = math.ceil(account_wait)
end
return reply
