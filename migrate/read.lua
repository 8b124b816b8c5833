-- keyguard migrate: read one key as a unit, for a copy to another node and
-- for verify and cleanup.
--
-- KEYS[1]  the key
--
-- returns  {type, deadline, payload}
--          type      "none" when the key does not exist (then nothing else)
--          deadline  PEXPIRETIME: the expiry in Unix milliseconds, -1 for none
--          payload   the DUMP serialization, or false when the server cannot
--                    serialize this type (servers that only emulate DUMP)
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then return {t} end
local d = redis.pcall('DUMP', KEYS[1])
if type(d) ~= 'string' then d = false end
return {t, redis.call('PEXPIRETIME', KEYS[1]), d}
