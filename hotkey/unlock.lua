-- keyguard load lock release (stampede protection): delete the lock only
-- while it still holds this caller's token, so that a lock which expired
-- and was taken by another process is never released by the first one.
--
-- KEYS[1]  the lock key (a key of a registered lock: template)
-- ARGV[1]  the token the caller stored with SET key token NX PX ttl
--
-- returns  1 the lock was ours and is released
--          0 the lock is gone, or held under another token
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
