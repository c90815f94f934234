--[[
  Moves an account's human gap (see pace-reserve-safe-6) to at least ARGV[2]: the moment its
  last request, really written some time after its slot, allows the next one. Once per job,
  for accounts with sendDelaySeconds only.
  KEYS[1] account gap key
  ARGV[1] now, ms
  ARGV[2] earliest next send, ms
  returns CODE.OK when the gap moved, CODE.UNCHANGED when it already was as late
]]
local now = tonumber(ARGV[1])
local floor = tonumber(ARGV[2])
local gap = tonumber(redis.call('GET', KEYS[1]) or '0')
if floor <= gap or floor <= now then
  return CODE.UNCHANGED
end
redis.call('SET', KEYS[1], floor, 'PX', math.ceil(floor - now) + 1000)
return CODE.OK
