--[[
  Who holds an account's socket lease, without asking for it (no hand-over request is left).
  KEYS[1] socket lease key
  ARGV[1] holder id asking
  returns CODE.HELD when ARGV[1] holds it, CODE.BUSY when another holder does,
          CODE.FREE when nobody does
]]
local holder = redis.call('GET', KEYS[1])
if not holder then
  return CODE.FREE
end
if holder == ARGV[1] then
  return CODE.HELD
end
return CODE.BUSY
