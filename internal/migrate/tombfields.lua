-- keyguard migrate cleanup with moved fields across Cluster slots: move
-- the fields from the old hash, if they still hold what was verified, to
-- a tombstone hash in the same slot that expires after the grace period.
-- The old hash's other fields stay.
--
-- KEYS[1]  the old hash
-- KEYS[2]  its tombstone (same slot)
-- ARGV[1]  n, the number of fields
-- ARGV[2 … n+1]      the field names
-- ARGV[n+2 … 2n+1]   the verified values, each prefixed with "=", or "-"
--                    for a field the hash lacked
-- ARGV[2n+2]         the grace period in milliseconds
--
-- returns  1 moved, 0 a field changed since (left alone)
local n = tonumber(ARGV[1])
if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then return 0 end
local fields = {}
for i = 1, n do fields[i] = ARGV[i + 1] end
local v = redis.call('HMGET', KEYS[1], unpack(fields))
local kept = {}
for i = 1, n do
  local want = ARGV[n + 1 + i]
  if want == '-' then
    if v[i] then return 0 end
  elseif not v[i] or '=' .. v[i] ~= want then
    return 0
  else
    kept[#kept + 1] = fields[i]
    kept[#kept + 1] = v[i]
  end
end
if #kept == 0 then return 0 end
redis.call('HSET', KEYS[2], unpack(kept))
redis.call('PEXPIRE', KEYS[2], ARGV[2 * n + 2])
redis.call('HDEL', KEYS[1], unpack(fields))
return 1
