-- keyguard migrate cleanup across Cluster slots, where no script sees both
-- keys: move the old key, if it is exactly what was verified, to its
-- tombstone in the same slot, which expires after the grace period. Until
-- then `cleanup --restore` (restore.lua) can bring it back.
--
-- KEYS[1]  the old key
-- KEYS[2]  its tombstone (same slot)
-- ARGV[1]  SHA-1 (hex) of the old key's DUMP payload that was verified
-- ARGV[2]  the old key's expiry that was verified (PEXPIRETIME, -1 for none)
-- ARGV[3]  the grace period in milliseconds
--
-- returns  1 moved, 0 the key changed or is gone since (left alone)
local d = redis.pcall('DUMP', KEYS[1])
if type(d) ~= 'string' then return 0 end
if redis.sha1hex(d) ~= ARGV[1] then return 0 end
if redis.call('PEXPIRETIME', KEYS[1]) ~= tonumber(ARGV[2]) then return 0 end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
