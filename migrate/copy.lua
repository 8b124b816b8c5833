-- keyguard migrate: copy one key to its new name when both keys are on one
-- node (a standalone server, or one Cluster slot). COPY carries the value
-- and the expiry deadline exactly; without REPLACE it never overwrites.
--
-- KEYS[1]  the old key
-- KEYS[2]  the new key
-- ARGV[1]  the type the old key must have (string, hash, list, set, zset, stream)
-- ARGV[2]  "1" to replace an existing new key, "0" to leave it alone
--
-- returns  1 copied, 0 the new key exists and was left alone,
--          -1 the old key is gone (expired or deleted since SCAN),
--          -2 the old key has another type (not copied)
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then return -1 end
if t ~= ARGV[1] then return -2 end
if ARGV[2] == '1' then
  return redis.call('COPY', KEYS[1], KEYS[2], 'REPLACE')
end
return redis.call('COPY', KEYS[1], KEYS[2])
