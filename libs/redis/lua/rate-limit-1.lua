--[[
  Takes one request from a GCRA limit with a burst of `tolerance` (ms of allowance held at once),
  shared by every API replica. The clock is the caller's.
  KEYS[1] the limited key (its theoretical arrival time, ms)
  ARGV[1] now, ms
  ARGV[2] interval between requests, ms (60000 / per-minute limit)
  ARGV[3] tolerance, ms (the burst: a minute's allowance less one interval)
  returns CODE.OK when allowed (and spent), else {CODE.LIMITED, ms until the next request is allowed}
]]
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local tolerance = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local allow_at = tat - tolerance
if allow_at > now then
  return {CODE.LIMITED, math.ceil(allow_at - now)}
end
local next_tat = tat + interval
-- once the bucket is full again the key means nothing: let it expire then
redis.call('SET', KEYS[1], next_tat, 'PX', math.max(1, math.ceil(next_tat - now)))
return CODE.OK
