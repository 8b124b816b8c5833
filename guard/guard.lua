-- keyguard namespace guard (seed 002, 写法一): check the owner of a hash and
-- write to it in one atomic step. One key per call, so it runs on Cluster.
--
-- KEYS[1]  the guarded hash
-- ARGV[1]  operation: "set" or "del"
-- ARGV[2]  the caller's namespace, e.g. "order-service:order" (non-empty)
--
-- "set": claim the key when it has no owner, refuse it when the owner is
--        another namespace, then HSET the business fields.
--   ARGV[3]    TTL in milliseconds, jitter already added by the client. It is
--              applied only when the key has no TTL (PTTL == -1): a write
--              never renews it. "0" means persistent: never set a TTL.
--   ARGV[4..]  field, value, field, value, ... (at least one pair).
--   returns    {added, updated, claim, ttl_set}
--              added    fields that did not exist before
--              updated  existing fields overwritten (distinct names)
--              claim    0 the key was already ours, 1 we created it,
--                       2 we adopted a hash that existed without an owner
--              ttl_set  1 when this call set the TTL, else 0
--
-- "del": delete the key when it is ours or has no owner.
--   returns    1 deleted, 0 the key did not exist
--
-- Error replies (nothing has been written when one is returned):
--   KEYGUARD_CONFLICT owner=<ns>       the key belongs to another namespace
--   KEYGUARD_CONFLICT owner_hex=<hex>  same; the owner has bytes outside
--                                      printable ASCII or is longer than 200
--                                      bytes (hex of its first 200 bytes,
--                                      then " truncated" when cut)
--   KEYGUARD_WRONGTYPE type=<type>     the key exists and is not a hash
--   KEYGUARD_RESERVED field=__ns__     a business field named __ns__
--   KEYGUARD_ARGS <what>               malformed call
--   any other error (OOM, …) is passed through from Redis.
--
-- The reserved field __ns__ holds the owner's namespace.

local key = KEYS[1]
local op = ARGV[1]
local ns = ARGV[2]
local NS_FIELD = '__ns__'
local CHUNK = 500 -- field/value pairs per HSET: stays far below unpack's limit

if key == nil or ns == nil or ns == '' then
  return redis.error_reply('KEYGUARD_ARGS need KEYS[1] and a namespace in ARGV[2]')
end

local n = #ARGV
local ttl = 0
local distinct = 0
if op == 'set' then
  -- A plain integer of at most 15 digits: PEXPIRE must not fail after the
  -- fields are written (Redis does not roll a script back).
  if ARGV[3] == nil or not string.find(ARGV[3], '^%d+$') or #ARGV[3] > 15 then
    return redis.error_reply('KEYGUARD_ARGS set needs a TTL in ms (0 to 999999999999999)')
  end
  ttl = tonumber(ARGV[3])
  if n < 5 or (n - 3) % 2 ~= 0 then
    return redis.error_reply('KEYGUARD_ARGS set needs field/value pairs after the TTL')
  end
  -- Validate every field before anything is written.
  if n == 5 then
    if ARGV[4] == NS_FIELD then
      return redis.error_reply('KEYGUARD_RESERVED field=__ns__')
    end
    distinct = 1
  else
    local seen = {}
    for i = 4, n, 2 do
      local f = ARGV[i]
      if f == NS_FIELD then
        return redis.error_reply('KEYGUARD_RESERVED field=__ns__')
      end
      if not seen[f] then
        seen[f] = true
        distinct = distinct + 1
      end
    end
  end
elseif op ~= 'del' then
  return redis.error_reply('KEYGUARD_ARGS unknown operation')
end

-- pcall: a key of another type makes HGET fail with WRONGTYPE; report the
-- type we found instead of the bare error.
local owner = redis.pcall('HGET', key, NS_FIELD)
if type(owner) == 'table' and owner.err then
  if string.sub(owner.err, 1, 9) == 'WRONGTYPE' then
    return redis.error_reply('KEYGUARD_WRONGTYPE type=' .. redis.call('TYPE', key).ok)
  end
  return owner
end

if owner and owner ~= ns then
  -- Error replies cannot carry CR/LF; hex-encode anything unusual.
  if #owner <= 200 and not string.find(owner, '[^%w%p]') then
    return redis.error_reply('KEYGUARD_CONFLICT owner=' .. owner)
  end
  local hex = string.gsub(string.sub(owner, 1, 200), '.', function(c)
    return string.format('%02x', string.byte(c))
  end)
  if #owner > 200 then
    hex = hex .. ' truncated'
  end
  return redis.error_reply('KEYGUARD_CONFLICT owner_hex=' .. hex)
end

if op == 'del' then
  return redis.call('DEL', key)
end

local claim = 0
if not owner then
  claim = 1
  if redis.call('EXISTS', key) == 1 then
    claim = 2
  end
  redis.call('HSET', key, NS_FIELD, ns)
end

local added = 0
local i = 4
while i <= n do
  local last = math.min(i + 2 * CHUNK - 1, n)
  added = added + redis.call('HSET', key, unpack(ARGV, i, last))
  i = last + 1
end

local ttl_set = 0
if ttl > 0 and redis.call('PTTL', key) == -1 then
  redis.call('PEXPIRE', key, ARGV[3])
  ttl_set = 1
end

return {added, distinct - added, claim, ttl_set}
