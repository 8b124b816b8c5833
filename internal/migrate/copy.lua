-- keyguard migrate copy, both keys on one node: COPY the old key to the
-- new one, then give the new key the expiry the new template allows.
--
-- KEYS[1]  the old key
-- KEYS[2]  the new key
-- ARGV[1]  "1" to replace a new key that exists, "0" to leave it alone
-- ARGV[2]  "apply" the template's TTL policy, or "keep" the old expiry
-- ARGV[3]  the new template's TTL in milliseconds, for an old key without one
-- ARGV[4]  the new template's longest TTL in milliseconds (TTL + jitter);
--          0 for a persistent template (no expiry), -1 when the template
--          declares no TTL (no expiry breaks it)
--
-- returns  0 not copied (the new key exists, or the old key is gone),
--          1 copied with the old expiry, 2 copied with an expiry set by
--          the template; with "keep", 3 copied without an expiry the
--          template wants, 4 copied with an expiry it does not allow
local copied
if ARGV[1] == '1' then
  copied = redis.call('COPY', KEYS[1], KEYS[2], 'REPLACE')
else
  copied = redis.call('COPY', KEYS[1], KEYS[2])
end
if copied == 0 then return 0 end
local max = tonumber(ARGV[4])
if max < 0 then return 1 end
local d = redis.call('PEXPIRETIME', KEYS[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local breaks
if max == 0 then
  breaks = d > 0
else
  breaks = d < 0 or d > now + max
end
if not breaks then return 1 end
if ARGV[2] == 'keep' then
  if d < 0 then return 3 end
  return 4
end
if max == 0 then
  redis.call('PERSIST', KEYS[2])
elseif d < 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
else
  redis.call('PEXPIREAT', KEYS[2], now + max)
end
return 2
