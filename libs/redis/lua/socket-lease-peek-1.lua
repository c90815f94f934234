--[[
  Who holds an account's socket lease, without asking for it (no hand-over request is left).
  KEYS[1] socket lease key
  ARGV[1] holder id asking
  returns 2 when ARGV[1] holds it, 1 when another holder does, 0 when nobody does
]]
local holder = redis.call('GET', KEYS[1])
if not holder then
  return 0
end
if holder == ARGV[1] then
  return 2
end
return 1
