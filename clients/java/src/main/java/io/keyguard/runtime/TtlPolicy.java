package io.keyguard.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The registry's TTL policy for one key template: a key of a TTL template is
 * always written with its TTL (plus a random jitter when the template has
 * ttl_jitter), a key of a persistent template never gets one, and nothing
 * here writes a TTL template's key without a TTL. Build it from a template
 * of the generated builders ({@code keyguard gen --lang java}):
 *
 * <pre>
 * Keys.Template t = Keys.ORDER_BASE;
 * TtlPolicy p = new TtlPolicy(executor, t.template, t.type, t.ttl, t.ttlJitter, t.persistent);
 * p.hset(Keys.orderBase(1001).key(), Map.of("amount", "99")); // MULTI HSET PEXPIRE EXEC
 * </pre>
 *
 * Every write (re)sets the TTL, as SET ... PX does; the namespace guard sets it once instead.
 * Built with the template's declared fields ({@code t.fields, t.fieldsExtra}), it writes them
 * alone: {@link #set} refuses a value that is not a JSON object of those fields and
 * {@link #hset} a hash field not declared ({@link PolicyException}, reason schema), before
 * sending anything.
 */
public final class TtlPolicy {
    private final ScriptExecutor x;
    private final String template, type;
    private final long ttlMs, jitterMs;
    private final boolean persistent;
    private final DeclaredFields fields;

    /** The policy of a template whose fields are not checked (as if it declared none). */
    public TtlPolicy(ScriptExecutor executor, String template, String type, Duration ttl, Duration jitter, boolean persistent) {
        this(executor, template, type, ttl, jitter, persistent, List.of(), false);
    }

    /**
     * The policy of a template with its declared fields (empty: none declared) and whether values
     * may hold others (fields_extra: allow), as the generated {@code Keys.Template} carries them.
     */
    public TtlPolicy(ScriptExecutor executor, String template, String type, Duration ttl, Duration jitter, boolean persistent,
            List<String> fields, boolean fieldsExtra) {
        this.x = executor;
        this.template = template;
        this.type = type;
        this.ttlMs = ttl == null ? 0 : ttl.toMillis();
        this.jitterMs = jitter == null ? 0 : jitter.toMillis();
        this.persistent = persistent;
        this.fields = new DeclaredFields(template, fields, fieldsExtra);
        if (!persistent && ttlMs <= 0) {
            throw new PolicyException("policy", null, template, "no-policy",
                    "the template has no TTL policy; give it a ttl, or persistent: true if the key must never expire");
        }
    }

    /** The TTL in ms of the next write (jitter drawn); 0 for a persistent template. */
    public long ttlMs() {
        if (persistent) {
            return 0;
        }
        return ttlMs + (jitterMs > 0 ? ThreadLocalRandom.current().nextLong(jitterMs + 1) : 0);
    }

    private void checkType(String op, String key, String want) {
        if (type != null && !type.isEmpty() && !type.equals(want)) {
            throw new PolicyException(op, key, template, "type", "the template declares type " + type
                    + "; use the helper for that type");
        }
    }

    /** SET key value PX ttl (no PX for a persistent template). */
    public void set(String key, String value) {
        checkType("set", key, "string");
        if ("string".equals(type)) {
            fields.checkJson("set", key, value);
        }
        long ttl = ttlMs();
        x.execute(key, ttl > 0 ? List.of("SET", key, value, "PX", Long.toString(ttl)) : List.of("SET", key, value));
    }

    /** HSET and PEXPIRE in one MULTI/EXEC; the fields added. */
    public long hset(String key, Map<String, String> fields) {
        checkType("hset", key, "hash");
        if ("hash".equals(type)) {
            this.fields.checkHash("hset", key, fields.keySet());
        }
        List<String> cmd = new ArrayList<>(List.of("HSET", key));
        fields.forEach((f, v) -> {
            cmd.add(f);
            cmd.add(v);
        });
        long ttl = ttlMs();
        // MULTI/EXEC through one executor needs one connection: adapters over a
        // pool must run this on a pinned connection (see README.md).
        x.execute(key, List.of("MULTI"));
        try {
            x.execute(key, cmd);
            if (ttl > 0) {
                x.execute(key, List.of("PEXPIRE", key, Long.toString(ttl)));
            }
        } catch (RuntimeException e) {
            x.execute(key, List.of("DISCARD"));
            throw e;
        }
        List<?> r = (List<?>) x.execute(key, List.of("EXEC"));
        return ((Number) r.get(0)).longValue();
    }

    /** Always refused on a TTL template: its keys must not lose their TTL. */
    public void persist(String key) {
        throw new PolicyException("persist", key, template, "persistent",
                persistent ? "the template is persistent: its keys have no TTL to remove"
                        : "the template has a TTL; a persistent write would keep the key forever");
    }
}
