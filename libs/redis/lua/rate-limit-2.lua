--[[
  Takes one request from two GCRA limits at once, or from neither: the API's authentication
  limits (an address's failures, a token's requests) in one round trip. The clock is the caller's.
  KEYS[1], KEYS[2] the limited keys (their theoretical arrival times, ms)
  ARGV[1] now, ms
  ARGV[2], ARGV[3] KEYS[1]'s interval and tolerance, ms (as rate-limit-1)
  ARGV[4] 1 to spend from KEYS[1], 0 to only check that it is not spent out
  ARGV[5], ARGV[6] KEYS[2]'s interval and tolerance, ms (always spent)
  returns CODE.OK when both allow (and are spent), else {CODE.LIMITED, ms until allowed, 1 or 2:
  the limit that refused}; a refusal spends nothing
]]
local now = tonumber(ARGV[1])

-- the key's TAT (at least now), and how long until it allows a request (0: now)
local function wait_of(key, tolerance)
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local wait = tat - tolerance - now
  if wait < 0 then wait = 0 end
  return tat, wait
end

local tat1, wait1 = wait_of(KEYS[1], tonumber(ARGV[3]))
if wait1 > 0 then return {CODE.LIMITED, math.ceil(wait1), 1} end
local tat2, wait2 = wait_of(KEYS[2], tonumber(ARGV[6]))
if wait2 > 0 then return {CODE.LIMITED, math.ceil(wait2), 2} end

-- once a bucket is full again its key means nothing: let it expire then
local function spend(key, tat, interval)
  local next_tat = tat + interval
  redis.call('SET', key, next_tat, 'PX', math.max(1, math.ceil(next_tat - now)))
end
if ARGV[4] == '1' then spend(KEYS[1], tat1, tonumber(ARGV[2])) end
spend(KEYS[2], tat2, tonumber(ARGV[5]))
return CODE.OK
