-- keyguard migrate cleanup with moved fields: delete the fields from the
-- old hash only if they still hold what was verified (compare and delete,
-- atomic). The hash's other fields stay.
--
-- KEYS[1]  the old hash
-- ARGV[1]  n, the number of fields
-- ARGV[2 … n+1]      the field names
-- ARGV[n+2 … 2n+1]   the verified values, each prefixed with "=", or "-"
--                    for a field the hash lacked
--
-- returns  1 deleted, 0 a field changed since (left alone)
local n = tonumber(ARGV[1])
if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then return 0 end
local fields = {}
for i = 1, n do fields[i] = ARGV[i + 1] end
local v = redis.call('HMGET', KEYS[1], unpack(fields))
for i = 1, n do
  local want = ARGV[n + 1 + i]
  if want == '-' then
    if v[i] then return 0 end
  elseif not v[i] or '=' .. v[i] ~= want then
    return 0
  end
end
redis.call('HDEL', KEYS[1], unpack(fields))
return 1
