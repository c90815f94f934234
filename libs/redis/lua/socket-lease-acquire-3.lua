--[[
  Takes the lease on an account's one live WhatsApp socket, or keeps it. When another holder
  has it, records a hand-over request (the first asker keeps its place until it stops asking),
  and a free lease with a pending request goes to the asker only.
  KEYS[1] socket lease key
  KEYS[2] hand-over request key
  KEYS[3] released mark (socket-lease-release-2: the last holder closed its socket, then let go)
  ARGV[1] holder id
  ARGV[2] lease time to live, ms
  ARGV[3] hand-over request time to live, ms
  ARGV[4] '0': do not ask for a hand-over (an always-connected holder takes free accounts only)
  returns CODE.TAKEN when newly taken after an expiry (its holder may still have a socket until
          its next renewal), CODE.HANDED when newly taken after a release, CODE.HELD when
          already held by this id, CODE.BUSY when another holds it or is owed it (hand-over asked)
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return CODE.HELD
end
local asker = redis.call('GET', KEYS[2])
if holder then
  if ARGV[4] ~= '0' and (not asker or asker == ARGV[1]) then
    redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
  end
  return CODE.BUSY
end
if asker and asker ~= ARGV[1] then
  return CODE.BUSY
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('DEL', KEYS[2])
if redis.call('DEL', KEYS[3]) == 1 then
  return CODE.HANDED
end
return CODE.TAKEN
