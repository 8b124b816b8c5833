package io.keyguard.runtime;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Wraps a {@link ScriptExecutor} so that every write to a key of a
 * registered template is marked in a {@link WriterRecorder} for this
 * service, and, given {@link Metrics}, every command with a key is counted
 * as the Go hook counts it: the interceptor for code that writes through the
 * executor (Jedis, Lettuce, RedisTemplate adapters, a {@link TtlPolicy})
 * rather than through a Guard. templateOf maps a key to its template text,
 * or null for a key of no template; {@link Templates#matcher} builds one
 * from the registry's templates (the generated builders' {@code Keys.TEMPLATES}).
 */
public final class RecordingExecutor implements ScriptExecutor {
    /** Commands that write their keys (Redis 7.0); any other command with a key reads it. */
    static final Set<String> WRITES = new HashSet<>(Arrays.asList((""
            + "APPEND BITFIELD BITOP BLMOVE BLMPOP BLPOP BRPOP BRPOPLPUSH BZMPOP BZPOPMAX BZPOPMIN COPY DECR DECRBY DEL "
            + "EXPIRE EXPIREAT GEOADD GEORADIUS GEORADIUSBYMEMBER GEOSEARCHSTORE GETDEL GETEX GETSET HDEL HINCRBY "
            + "HINCRBYFLOAT HMSET HSET HSETNX INCR INCRBY INCRBYFLOAT LINSERT LMOVE LMPOP LPOP LPUSH LPUSHX LREM LSET "
            + "LTRIM MIGRATE MOVE MSET MSETNX PERSIST PEXPIRE PEXPIREAT PFADD PFMERGE PSETEX RENAME RENAMENX RESTORE "
            + "RPOP RPOPLPUSH RPUSH RPUSHX SADD SDIFFSTORE SET SETBIT SETEX SETNX SETRANGE SINTERSTORE SMOVE SORT "
            + "SPOP SREM SUNIONSTORE UNLINK XACK XADD XAUTOCLAIM XCLAIM XDEL XGROUP XSETID XTRIM ZADD ZDIFFSTORE "
            + "ZINCRBY ZINTERSTORE ZMPOP ZPOPMAX ZPOPMIN ZRANGESTORE ZREM ZREMRANGEBYLEX ZREMRANGEBYRANK "
            + "ZREMRANGEBYSCORE ZUNIONSTORE EVAL EVALSHA FCALL").split(" ")));

    private final ScriptExecutor next;
    private final WriterRecorder recorder;
    private final String service;
    private final Function<String, String> templateOf;
    private final Metrics metrics;
    private final Map<String, String> owners;

    /** Writes marked in recorder; nothing counted. */
    public RecordingExecutor(ScriptExecutor next, WriterRecorder recorder, String service, Function<String, String> templateOf) {
        this(next, recorder, service, templateOf, null, Map.of());
    }

    /**
     * Writes marked in recorder (null: none) and every command with a key counted in metrics
     * (null: none), under the owner owners gives its template (template text to owner, as the
     * generated {@code Keys.TEMPLATES} give them). Give metrics here or to the Guard that runs on
     * this executor, not both: each would count the guard's writes.
     */
    public RecordingExecutor(ScriptExecutor next, WriterRecorder recorder, String service, Function<String, String> templateOf,
            Metrics metrics, Map<String, String> owners) {
        if (service == null || service.isEmpty()) {
            throw new IllegalArgumentException("keyguard: RecordingExecutor needs the calling service's name, such as \"order-team\"");
        }
        this.next = next;
        this.recorder = recorder;
        this.service = service;
        this.templateOf = templateOf;
        this.metrics = metrics;
        this.owners = owners == null ? Map.of() : owners;
    }

    @Override
    public Object execute(String key, List<String> command) {
        Object r = next.execute(key, command);
        // MULTI, EXEC and DISCARD are given the key their connection is
        // chosen by, but carry none.
        if (key == null || command.size() < 2) {
            return r;
        }
        boolean write = WRITES.contains(command.get(0).toUpperCase(Locale.ROOT));
        String t = templateOf.apply(key);
        if (t != null && write && recorder != null) {
            recorder.mark(t, service);
        }
        if (metrics != null) {
            metrics.command(t, t == null ? null : owners.getOrDefault(t, ""), service, write);
        }
        return r;
    }
}
