-- keyguard migrate cleanup with moved fields, both keys on one node:
-- delete the fields from the old hash only if they still hold what was
-- verified and the new hash still holds the same values with the expiry
-- that was verified (compare both, then delete; atomic). The old hash's
-- other fields stay.
--
-- KEYS[1]  the old hash
-- KEYS[2]  the new hash
-- ARGV[1]  n, the number of fields
-- ARGV[2 … n+1]      the field names
-- ARGV[n+2 … 2n+1]   the verified values, each prefixed with "=", or "-"
--                    for a field the hashes lacked
-- ARGV[2n+2]         the new hash's expiry that was verified (PEXPIRETIME)
-- ARGV[2n+3]         how far that expiry may have moved, in milliseconds
--
-- returns  1 deleted, 0 an old field changed since (left alone),
--          2 the new hash changed or is gone (the old fields left alone)
local n = tonumber(ARGV[1])
local fields = {}
for i = 1, n do fields[i] = ARGV[i + 1] end
local function same(key)
  if redis.call('TYPE', key)['ok'] ~= 'hash' then return false end
  local v = redis.call('HMGET', key, unpack(fields))
  for i = 1, n do
    local want = ARGV[n + 1 + i]
    if want == '-' then
      if v[i] then return false end
    elseif not v[i] or '=' .. v[i] ~= want then
      return false
    end
  end
  return true
end
if not same(KEYS[1]) then return 0 end
if not same(KEYS[2]) then return 2 end
local got, want = redis.call('PEXPIRETIME', KEYS[2]), tonumber(ARGV[2 * n + 2])
if got < 0 or want < 0 then
  if got ~= want then return 2 end
elseif math.abs(got - want) > tonumber(ARGV[2 * n + 3]) then
  return 2
end
redis.call('HDEL', KEYS[1], unpack(fields))
return 1
