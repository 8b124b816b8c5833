-- keyguard migrate cleanup: delete an old key only if it is exactly what
-- was verified against its new key (compare and delete, atomic).
--
-- KEYS[1]  the old key
-- ARGV[1]  SHA-1 (hex) of the DUMP payload that was verified
-- ARGV[2]  the expiry that was verified (PEXPIRETIME, -1 for none)
--
-- returns  1 deleted, 0 the key changed or is gone since (left alone)
local d = redis.pcall('DUMP', KEYS[1])
if type(d) ~= 'string' then return 0 end
if redis.sha1hex(d) ~= ARGV[1] then return 0 end
if redis.call('PEXPIRETIME', KEYS[1]) ~= tonumber(ARGV[2]) then return 0 end
return redis.call('UNLINK', KEYS[1])
