-- keyguard migrate: write moved hash fields to the new key.
--
-- KEYS[1]  the new hash
-- ARGV[1]  "1" to replace an existing key, "0" to leave it alone
-- ARGV[2]  the old key's expiry in Unix milliseconds, 0 for none
-- ARGV[3]  the new template's longest TTL in milliseconds: the new key
--          expires at the old deadline or after this, whichever is first;
--          0 when the new template is persistent (no expiry at all)
-- ARGV[4…] field, value, field, value, …
--
-- returns  1 written, 0 the key exists and was left alone,
--          -1 the deadline has passed (the old key expired meanwhile)
if ARGV[1] ~= '1' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local deadline, cap = tonumber(ARGV[2]), tonumber(ARGV[3])
if cap > 0 then
  local now = redis.call('TIME')
  local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  if deadline > 0 and deadline <= ms then return -1 end
  if deadline == 0 or deadline > ms + cap then deadline = ms + cap end
else
  deadline = 0
end
if ARGV[1] == '1' then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
if deadline > 0 then redis.call('PEXPIREAT', KEYS[1], deadline) end
return 1
