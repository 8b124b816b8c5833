-- keyguard migrate cleanup, both keys on one node (a standalone server, or
-- one Cluster slot): delete the old key only if it is exactly what was
-- verified and its new key still is too (compare both, then delete; atomic).
--
-- KEYS[1]  the old key
-- KEYS[2]  the new key
-- ARGV[1]  SHA-1 (hex) of the old key's DUMP payload that was verified
-- ARGV[2]  the old key's expiry that was verified (PEXPIRETIME, -1 for none)
-- ARGV[3]  SHA-1 (hex) of the new key's DUMP payload that was verified
-- ARGV[4]  the new key's expiry that was verified
-- ARGV[5]  how far the new key's expiry may have moved, in milliseconds
--
-- returns  1 deleted, 0 the old key changed or is gone (left alone),
--          2 the new key changed or is gone (the old key left alone)
local function same(key, sum, deadline, tol)
  local d = redis.pcall('DUMP', key)
  if type(d) ~= 'string' then return false end
  if redis.sha1hex(d) ~= sum then return false end
  local got, want = redis.call('PEXPIRETIME', key), tonumber(deadline)
  if got < 0 or want < 0 then return got == want end
  return math.abs(got - want) <= tol
end
if not same(KEYS[1], ARGV[1], ARGV[2], 0) then return 0 end
if not same(KEYS[2], ARGV[3], ARGV[4], tonumber(ARGV[5])) then return 2 end
return redis.call('UNLINK', KEYS[1])
