package io.keyguard.runtime;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The namespace guard: a hash records its owner namespace in the reserved
 * field {@code __ns__}, and every write checks and claims it atomically with
 * the guard's Lua script (the Go guard's, embedded from one source), so a
 * second service writing the same key fails with {@link ForeignOwnerException}
 * instead of silently overwriting. The TTL is set only when the key has
 * none; a key of another type is a {@link WrongTypeException}.
 *
 * <pre>
 * Guard g = Guard.builder(executor, "order-service:order").ttl(Duration.ofHours(1)).build();
 * g.hset("order:order:1001:base", Map.of("amount", "99"));
 * </pre>
 *
 * Thread-safe when the executor is. Build one per guarded key template.
 */
public final class Guard {
    /** The hash field holding the owner's namespace. */
    public static final String RESERVED_FIELD = "__ns__";
    /** The SHA-1 digest EVALSHA uses for {@link Script#SOURCE}; the same in every language. */
    public static final String SCRIPT_SHA = sha1(Script.SOURCE);

    private final ScriptExecutor x;
    private final String owner;
    private final long ttlMs, jitterMs;
    private final boolean persistent;
    private final String template, service;
    private final WriterRecorder recorder;
    private final Metrics metrics;
    private final String templateOwner;
    private final DeclaredFields fields;

    private Guard(Builder b) {
        if (b.x == null) {
            throw new IllegalArgumentException("keyguard: no executor; wrap your Redis client (see README.md)");
        }
        validNamespace(b.owner);
        if (b.persistent && (b.ttl != null || b.jitter != null)) {
            throw new IllegalArgumentException("keyguard: persistent with a TTL or jitter; a persistent key gets no TTL");
        }
        if (!b.persistent && (b.ttl == null || b.ttl.toMillis() < 1)) {
            throw new IllegalArgumentException("keyguard: TTL " + b.ttl
                    + "; give a TTL of at least 1ms, or persistent() for a key that must never expire");
        }
        if (b.jitter != null && b.jitter.isNegative()) {
            throw new IllegalArgumentException("keyguard: negative jitter " + b.jitter);
        }
        this.x = b.x;
        this.owner = b.owner;
        this.persistent = b.persistent;
        this.ttlMs = b.persistent ? 0 : b.ttl.toMillis();
        this.jitterMs = b.jitter == null ? 0 : b.jitter.toMillis();
        this.template = b.template;
        this.service = b.service == null ? b.owner : b.service;
        this.recorder = b.recorder;
        this.metrics = b.metrics;
        this.templateOwner = b.templateOwner;
        this.fields = new DeclaredFields(b.fieldsTemplate, b.fields, b.fieldsExtra);
    }

    public static Builder builder(ScriptExecutor executor, String owner) {
        return new Builder(executor, owner);
    }

    /** The guard's policy: a TTL (or persistent), and where its writes are recorded. */
    public static final class Builder {
        private final ScriptExecutor x;
        private final String owner;
        private Duration ttl, jitter;
        private boolean persistent;
        private String template, service;
        private WriterRecorder recorder;
        private Metrics metrics;
        private String templateOwner;
        private String fieldsTemplate;
        private List<String> fields;
        private boolean fieldsExtra;

        private Builder(ScriptExecutor x, String owner) {
            this.x = x;
            this.owner = owner;
        }

        /** Given to a key without TTL (normally the write creating it); never renewed. */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /** A random extra of up to jitter per write, so keys created together do not expire together. */
        public Builder jitter(Duration jitter) {
            this.jitter = jitter;
            return this;
        }

        /** Keys never get a TTL from the guard (registry persistent: true). */
        public Builder persistent() {
            this.persistent = true;
            return this;
        }

        /** Records successful writes as (template, service) in the writer records. */
        public Builder records(WriterRecorder recorder, String template, String service) {
            this.recorder = recorder;
            this.template = template;
            this.service = service;
            return this;
        }

        /**
         * Counts the guard's writes in metrics as keyguard_commands_total of template (its registry
         * owner templateOwner, this service; the same template and service as {@link #records}), and
         * the writes refused because another namespace owns the key as
         * keyguard_guard_conflicts_total: {@code .metrics(metrics, t.template, t.owner, "order-team")}
         * with the generated {@code Keys.Template t}. A template of null counts the writes as keys of
         * no template. Give metrics here or to a {@link RecordingExecutor} under the guard, not both.
         */
        public Builder metrics(Metrics metrics, String template, String templateOwner, String service) {
            this.metrics = metrics;
            this.template = template;
            this.templateOwner = templateOwner;
            this.service = service;
            return this;
        }

        /**
         * The fields the template declares and whether its values may hold others, as the
         * generated {@code Keys.Template} carries them ({@code t.template, t.fields, t.fieldsExtra}):
         * a write of another field is refused ({@link PolicyException}, reason schema) before
         * anything is sent. Build one guard per template to check each.
         */
        public Builder fields(String template, List<String> fields, boolean fieldsExtra) {
            this.fieldsTemplate = template;
            this.fields = fields;
            this.fieldsExtra = fieldsExtra;
            return this;
        }

        public Guard build() {
            return new Guard(this);
        }
    }

    static void validNamespace(String ns) {
        if (ns == null || ns.isEmpty()) {
            throw new IllegalArgumentException("keyguard: empty namespace; name the owner such as \"order-service:order\"");
        }
        if (ns.equals(RESERVED_FIELD)) {
            throw new IllegalArgumentException("keyguard: the namespace cannot be the reserved field name " + RESERVED_FIELD);
        }
        if (ns.getBytes(StandardCharsets.UTF_8).length > 200) {
            throw new IllegalArgumentException("keyguard: namespace longer than 200 bytes; keep it under 200");
        }
        for (int i = 0; i < ns.length(); i++) {
            char c = ns.charAt(i);
            if (c <= ' ' || c > '~') {
                throw new IllegalArgumentException(String.format(
                        "keyguard: namespace character %#x at %d; use printable ASCII without spaces", (int) c, i));
            }
        }
    }

    /** The namespace the guard writes as. */
    public String owner() {
        return owner;
    }

    private long ttlArg(String key, Duration ttl) {
        if (ttl != null) {
            if (persistent) {
                throw new IllegalArgumentException("keyguard: set \"" + key + "\": a TTL on a persistent guard");
            }
            if (ttl.toMillis() < 1) {
                throw new IllegalArgumentException("keyguard: set \"" + key + "\": TTL " + ttl + "; give at least 1ms");
            }
            return ttl.toMillis();
        }
        if (jitterMs > 0 && ttlMs > 0) {
            return ttlMs + ThreadLocalRandom.current().nextLong(jitterMs + 1);
        }
        return ttlMs;
    }

    private List<String> setArgs(String key, Map<String, String> fields, Duration ttl) {
        if (fields == null || fields.isEmpty()) {
            throw new IllegalArgumentException("keyguard: set \"" + key + "\": no fields given; pass at least one field");
        }
        List<String> args = new ArrayList<>(7 + 2 * fields.size());
        args.addAll(Arrays.asList("EVALSHA", SCRIPT_SHA, "1", key, "set", owner, Long.toString(ttlArg(key, ttl))));
        for (Map.Entry<String, String> e : fields.entrySet()) {
            if (RESERVED_FIELD.equals(e.getKey())) {
                throw new ReservedFieldException();
            }
            args.add(e.getKey());
            args.add(e.getValue());
        }
        this.fields.checkHash("set", key, fields.keySet());
        return args;
    }

    /** EVALSHA, and EVAL when the server lost the script (SCRIPT FLUSH, restart, failover). */
    private Object evalsha(String key, List<String> args) {
        try {
            return x.execute(key, args);
        } catch (RuntimeException e) {
            if (!replyText(e).startsWith("NOSCRIPT")) {
                throw e;
            }
        }
        List<String> eval = new ArrayList<>(args);
        eval.set(0, "EVAL");
        eval.set(1, Script.SOURCE);
        return x.execute(key, eval);
    }

    /** Writes one field; see {@link #hset(String, Map, Duration)}. */
    public Result set(String key, String field, String value) {
        return hset(key, Map.of(field, value), null);
    }

    public Result hset(String key, Map<String, String> fields) {
        return hset(key, fields, null);
    }

    /**
     * Writes fields to the hash at key in one atomic step: claims the key when
     * it has no owner, throws {@link ForeignOwnerException} when another
     * namespace owns it ({@link WrongTypeException} when it is not a hash), and
     * sets the TTL (ttl, or the guard's when null) only when the key has none.
     */
    public Result hset(String key, Map<String, String> fields, Duration ttl) {
        List<String> args = setArgs(key, fields, ttl);
        Object reply;
        try {
            reply = evalsha(key, args);
        } catch (RuntimeException e) {
            RuntimeException f = fail("set", key, e);
            if (metrics != null && f instanceof ForeignOwnerException) {
                metrics.guardConflict(template, ((ForeignOwnerException) f).owner());
            }
            throw f;
        }
        return parseSet(key, reply);
    }

    /** One write of {@link #hsetMany}. */
    public static final class SetOp {
        final String key;
        final Map<String, String> fields;
        final Duration ttl;

        public SetOp(String key, Map<String, String> fields, Duration ttl) {
            this.key = key;
            this.fields = fields;
            this.ttl = ttl;
        }
    }

    /**
     * Runs the writes in order, each atomic on its own (the batch is not):
     * one {@link Result} or RuntimeException per op.
     */
    public List<Object> hsetMany(List<SetOp> ops) {
        List<Object> out = new ArrayList<>(ops.size());
        for (SetOp op : ops) {
            try {
                out.add(hset(op.key, op.fields, op.ttl));
            } catch (RuntimeException e) {
                out.add(e);
            }
        }
        return out;
    }

    private Result parseSet(String key, Object reply) {
        if (!(reply instanceof List) || ((List<?>) reply).size() != 4) {
            throw new KeyguardException("keyguard: set \"" + key + "\": unexpected script reply " + reply
                    + "; is the server running the guard script " + SCRIPT_SHA + "?");
        }
        long[] n = new long[4];
        for (int i = 0; i < 4; i++) {
            n[i] = ((Number) ((List<?>) reply).get(i)).longValue();
        }
        if (recorder != null && template != null) {
            recorder.mark(template, service);
        }
        if (metrics != null) {
            metrics.command(template, templateOwner, service, true);
        }
        return new Result((int) n[0], (int) n[1], n[2] != 0, n[2] == 2, n[3] == 1);
    }

    private static final Pattern REPLY = Pattern.compile("KEYGUARD_(CONFLICT|WRONGTYPE|RESERVED|ARGS)(?: (.*))?", Pattern.DOTALL);

    private RuntimeException fail(String op, String key, RuntimeException e) {
        Matcher m = REPLY.matcher(replyText(e));
        if (!m.matches()) {
            return e;
        }
        String rest = m.group(2) == null ? "" : m.group(2);
        switch (m.group(1)) {
            case "CONFLICT":
                return new ForeignOwnerException(key, decodeOwner(rest), owner, op);
            case "WRONGTYPE":
                return new WrongTypeException(key, rest.startsWith("type=") ? rest.substring(5) : rest, owner, op);
            case "RESERVED":
                return new ReservedFieldException();
            default:
                return new KeyguardException("keyguard: " + op + " \"" + key + "\": " + m.group(0), e);
        }
    }

    /**
     * The error reply an exception carries: the message of it or of a cause
     * that starts with a reply code (clients and Spring wrap and prefix them).
     */
    static String replyText(Throwable e) {
        String first = null;
        for (Throwable t = e; t != null; t = t.getCause()) {
            String msg = t.getMessage();
            if (msg == null) {
                continue;
            }
            if (first == null) {
                first = msg;
            }
            for (String code : new String[] {"KEYGUARD_", "NOSCRIPT", "WRONGTYPE"}) {
                int i = msg.indexOf(code);
                if (i == 0 || i > 0 && (msg.charAt(i - 1) == ' ' || msg.charAt(i - 1) == ':')) {
                    return msg.substring(i);
                }
            }
        }
        return first == null ? "" : first;
    }

    static String decodeOwner(String s) {
        if (s.startsWith("owner=")) {
            return s.substring(6);
        }
        if (!s.startsWith("owner_hex=")) {
            return s;
        }
        String v = s.substring(10);
        boolean truncated = v.endsWith(" truncated");
        if (truncated) {
            v = v.substring(0, v.length() - 10);
        }
        if (v.length() % 2 != 0 || !v.matches("[0-9a-f]*")) {
            return s;
        }
        byte[] b = new byte[v.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(v.substring(2 * i, 2 * i + 2), 16);
        }
        String text = new String(b, StandardCharsets.UTF_8);
        return truncated ? text + "\u2026(truncated)" : text;
    }

    private RuntimeException readErr(String op, String key, RuntimeException e) {
        if (!replyText(e).startsWith("WRONGTYPE")) {
            return e;
        }
        return new WrongTypeException(key, text(x.execute(key, List.of("TYPE", key))), owner, op);
    }

    private void checkOwner(String op, String key, Object found) {
        if (found != null && !text(found).equals(owner)) {
            throw new ForeignOwnerException(key, text(found), owner, op);
        }
    }

    /** One field (HMGET of the owner field and the field), or null; a key of another namespace or type throws. */
    public String get(String key, String field) {
        if (RESERVED_FIELD.equals(field)) {
            throw new ReservedFieldException();
        }
        Object r;
        try {
            r = x.execute(key, List.of("HMGET", key, RESERVED_FIELD, field));
        } catch (RuntimeException e) {
            throw readErr("get", key, e);
        }
        List<?> l = (List<?>) r;
        checkOwner("get", key, l.get(0));
        return l.get(1) == null ? null : text(l.get(1));
    }

    /** The business fields (HGETALL, the owner field checked and removed). */
    public Map<String, String> getAll(String key) {
        Object r;
        try {
            r = x.execute(key, List.of("HGETALL", key));
        } catch (RuntimeException e) {
            throw readErr("getall", key, e);
        }
        Map<String, String> out = new LinkedHashMap<>();
        if (r instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) r).entrySet()) {
                out.put(text(e.getKey()), text(e.getValue()));
            }
        } else {
            List<?> l = (List<?>) r;
            for (int i = 0; i + 1 < l.size(); i += 2) {
                out.put(text(l.get(i)), text(l.get(i + 1)));
            }
        }
        checkOwner("getall", key, out.remove(RESERVED_FIELD));
        return out;
    }

    /** The namespace owning key, or null when it does not exist or has none. */
    public String ownerOf(String key) {
        try {
            Object v = x.execute(key, List.of("HGET", key, RESERVED_FIELD));
            return v == null ? null : text(v);
        } catch (RuntimeException e) {
            throw readErr("owner", key, e);
        }
    }

    /** Deletes key when it is ours or has no owner (one atomic step). */
    public boolean delete(String key) {
        try {
            return ((Number) evalsha(key, List.of("EVALSHA", SCRIPT_SHA, "1", key, "del", owner))).longValue() == 1;
        } catch (RuntimeException e) {
            throw fail("delete", key, e);
        }
    }

    /** DEL whoever owns the key: for an operator who confirmed the ownership. */
    public boolean forceDelete(String key) {
        return ((Number) x.execute(key, List.of("DEL", key))).longValue() == 1;
    }

    /**
     * EXPIRE key seconds NX: a TTL only when the key has none, so a writer that
     * does not own the key never changes the owner's lifecycle. Whole seconds, at least 1.
     */
    public boolean expireNx(String key, Duration ttl) {
        long s = Math.max(1, ttl.getSeconds());
        return ((Number) x.execute(key, List.of("EXPIRE", key, Long.toString(s), "NX"))).longValue() == 1;
    }

    static String text(Object v) {
        return v instanceof byte[] ? new String((byte[]) v, StandardCharsets.UTF_8) : String.valueOf(v);
    }

    private static String sha1(String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-1").digest(s.getBytes(StandardCharsets.UTF_8));
            StringBuilder b = new StringBuilder();
            for (byte x : d) {
                b.append(String.format("%02x", x));
            }
            return b.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
