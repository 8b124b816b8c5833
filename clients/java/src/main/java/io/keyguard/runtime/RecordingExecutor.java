package io.keyguard.runtime;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;

/**
 * Wraps a {@link ScriptExecutor} so that every write to a key of a
 * registered template is marked in a {@link WriterRecorder} for this
 * service: the interceptor for code that writes through the executor
 * (Jedis, Lettuce, RedisTemplate adapters) rather than through a Guard.
 * templateOf maps a key to its template text, or null for a key of no
 * template; {@link Templates#matcher} builds one from the registry's
 * templates (the generated builders' {@code Keys.TEMPLATES}).
 */
public final class RecordingExecutor implements ScriptExecutor {
    static final Set<String> WRITES = Set.of("APPEND", "DECR", "DECRBY", "DEL", "EXPIRE", "EXPIREAT", "GETDEL", "GETEX",
            "GETSET", "HDEL", "HINCRBY", "HINCRBYFLOAT", "HMSET", "HSET", "HSETNX", "INCR", "INCRBY", "INCRBYFLOAT",
            "LPUSH", "LPOP", "LREM", "LSET", "LTRIM", "PERSIST", "PEXPIRE", "PEXPIREAT", "PSETEX", "RPOP", "RPUSH",
            "SADD", "SET", "SETEX", "SETNX", "SETRANGE", "SPOP", "SREM", "UNLINK", "XADD", "XTRIM", "ZADD", "ZINCRBY",
            "ZREM", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK", "PFADD", "SETBIT");

    private final ScriptExecutor next;
    private final WriterRecorder recorder;
    private final String service;
    private final Function<String, String> templateOf;

    public RecordingExecutor(ScriptExecutor next, WriterRecorder recorder, String service, Function<String, String> templateOf) {
        this.next = next;
        this.recorder = recorder;
        this.service = service;
        this.templateOf = templateOf;
    }

    @Override
    public Object execute(String key, List<String> command) {
        Object r = next.execute(key, command);
        String name = command.get(0).toUpperCase(Locale.ROOT);
        boolean guardedWrite = name.startsWith("EVAL") && command.size() > 4 && command.get(4).equals("set");
        if (key != null && (WRITES.contains(name) || guardedWrite)) {
            String t = templateOf.apply(key);
            if (t != null) {
                recorder.mark(t, service);
            }
        }
        return r;
    }
}
