-- keyguard migrate: read the moved fields of a hash as a unit.
--
-- KEYS[1]  the hash
-- ARGV     the field names
--
-- returns  {type, deadline, value1, value2, …}
--          type      "none" when the key does not exist (then nothing else)
--          deadline  PEXPIRETIME: the expiry in Unix milliseconds, -1 for none
--          values    one per field, false when the hash lacks it (and when
--                    the key is not a hash)
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then return {t} end
local out = {t, redis.call('PEXPIRETIME', KEYS[1])}
if t == 'hash' then
  local v = redis.call('HMGET', KEYS[1], unpack(ARGV))
  for i = 1, #ARGV do out[i + 2] = v[i] end
else
  for i = 1, #ARGV do out[i + 2] = false end
end
return out
