--[[
  Takes an exclusive lock if it is free.
  KEYS[1] lock key
  ARGV[1] token (unique per holder)
  ARGV[2] time to live, ms
  returns CODE.TAKEN when taken, or {CODE.BUSY, remaining ttl ms} when another holder has it
]]
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return CODE.TAKEN
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
return {CODE.BUSY, ttl}
