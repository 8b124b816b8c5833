package io.keyguard.runtime;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Writer records: the records the Go hook writes, so that {@code keyguard
 * writers}, {@code keyguard serve} and the second-writer alert see Java
 * services. {@link #mark} is an in-memory set insertion; {@link #flush}
 * writes, for each (template, service) marked since the last flush:
 *
 * <pre>
 * HSET keyguard:{writers}:index &lt;id&gt; &lt;template&gt;
 * ZADD keyguard:{writers}:t:&lt;id&gt; GT &lt;now ms&gt; &lt;service&gt;
 * ZREMRANGEBYSCORE keyguard:{writers}:t:&lt;id&gt; -inf (&lt;now - window&gt;
 * PEXPIRE keyguard:{writers}:t:&lt;id&gt; &lt;window&gt;
 * </pre>
 *
 * Call flush from a scheduled executor (every 10 s is the Go default).
 */
public final class WriterRecorder {
    public static final String RECORD_PREFIX = "keyguard:{writers}:";
    public static final String RECORD_INDEX_KEY = RECORD_PREFIX + "index";

    private final ScriptExecutor x;
    private final long windowMs;
    private Set<List<String>> dirty = new HashSet<>();

    public WriterRecorder(ScriptExecutor executor, Duration window) {
        this.x = executor;
        this.windowMs = window.toMillis();
        if (windowMs <= 0) {
            throw new IllegalArgumentException("keyguard: writer-record window must be positive");
        }
    }

    public WriterRecorder(ScriptExecutor executor) {
        this(executor, Duration.ofHours(24));
    }

    /** The id of a template in the writer records: 16 hex digits of its SHA-256. */
    public static String templateId(String template) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(template.getBytes(StandardCharsets.UTF_8));
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < 8; i++) {
                b.append(String.format("%02x", d[i]));
            }
            return b.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Notes that service wrote a key of template (no I/O). */
    public synchronized void mark(String template, String service) {
        if (template != null && !template.isEmpty() && service != null && !service.isEmpty()) {
            dirty.add(List.of(template, service));
        }
    }

    /** Writes the records marked since the last flush; returns their number. On error they are kept. */
    public int flush() {
        Set<List<String>> todo;
        synchronized (this) {
            todo = dirty;
            dirty = new HashSet<>();
        }
        if (todo.isEmpty()) {
            return 0;
        }
        long now = System.currentTimeMillis();
        String oldest = "(" + (now - windowMs);
        List<List<String>> sorted = new ArrayList<>(todo);
        sorted.sort(Comparator.<List<String>, String>comparing(l -> l.get(0)).thenComparing(l -> l.get(1)));
        try {
            for (List<String> m : sorted) {
                String id = templateId(m.get(0));
                String key = RECORD_PREFIX + "t:" + id;
                x.execute(RECORD_INDEX_KEY, List.of("HSET", RECORD_INDEX_KEY, id, m.get(0)));
                x.execute(key, List.of("ZADD", key, "GT", Long.toString(now), m.get(1)));
                x.execute(key, List.of("ZREMRANGEBYSCORE", key, "-inf", oldest));
                x.execute(key, List.of("PEXPIRE", key, Long.toString(windowMs)));
            }
        } catch (RuntimeException e) {
            synchronized (this) {
                dirty.addAll(todo);
            }
            throw new KeyguardException("keyguard: flush writer records (" + todo.size()
                    + "): " + e.getMessage() + "; the records are kept for the next flush", e);
        }
        return todo.size();
    }
}
