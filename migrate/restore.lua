-- keyguard migrate: write a key read with read.lua under its new name, on
-- any node. The deadline is absolute (RESTORE … ABSTTL), so the new key
-- expires when the old one does however long the copy took.
--
-- KEYS[1]  the new key
-- ARGV[1]  the DUMP payload
-- ARGV[2]  the expiry in Unix milliseconds, 0 for none
-- ARGV[3]  "1" to replace an existing key, "0" to leave it alone
--
-- returns  1 written, 0 the key exists and was left alone,
--          -1 the deadline has passed (the old key expired meanwhile)
if ARGV[3] ~= '1' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local deadline = tonumber(ARGV[2])
if deadline > 0 then
  local now = redis.call('TIME')
  if deadline <= tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) then return -1 end
end
if ARGV[3] == '1' then
  redis.call('RESTORE', KEYS[1], deadline, ARGV[1], 'ABSTTL', 'REPLACE')
else
  redis.call('RESTORE', KEYS[1], deadline, ARGV[1], 'ABSTTL')
end
return 1
