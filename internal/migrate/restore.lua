-- keyguard migrate: bring an old key (or its moved fields) back from its
-- tombstone (tomb.lua, tombfields.lua). A value written to the old key
-- since is newer and wins: a whole key is not put back over it, a field
-- only where the hash lacks it.
--
-- KEYS[1]  the tombstone
-- KEYS[2]  the old key (same slot)
-- ARGV[1]  the old key's expiry when it was moved (PEXPIRETIME, -1 for none)
-- ARGV[2]  "k" for a whole key, "f" for moved fields
--
-- returns  1 restored, 0 the old key exists (the tombstone is left to
--          expire), -1 no tombstone (expired, or restored already)
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local deadline = tonumber(ARGV[1])
local created = redis.call('EXISTS', KEYS[2]) == 0
if ARGV[2] == 'k' then
  if not created then return 0 end
  redis.call('RENAME', KEYS[1], KEYS[2])
  if deadline > 0 then
    redis.call('PEXPIREAT', KEYS[2], deadline)
  else
    redis.call('PERSIST', KEYS[2])
  end
  return 1
end
if not created and redis.call('TYPE', KEYS[2])['ok'] ~= 'hash' then return 0 end
local kv = redis.call('HGETALL', KEYS[1])
for i = 1, #kv, 2 do redis.call('HSETNX', KEYS[2], kv[i], kv[i + 1]) end
if created and deadline > 0 then redis.call('PEXPIREAT', KEYS[2], deadline) end
redis.call('DEL', KEYS[1])
return 1
