package io.keyguard.runtime.jedis;

import io.keyguard.runtime.ScriptExecutor;
import java.util.List;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;

/**
 * A {@link ScriptExecutor} over Jedis 4+ ({@code JedisPooled}, {@code JedisCluster}
 * or any {@code UnifiedJedis}): each command goes through
 * {@code sendCommand(sampleKey, command, args)}, which routes by the key on a
 * Cluster. Error replies arrive as {@code JedisDataException} carrying the
 * reply text, as the Guard expects.
 *
 * <pre>
 * Guard g = Guard.builder(new JedisExecutor(new JedisPooled("localhost", 6379)), "order-service:order")
 *     .ttl(Duration.ofHours(1)).build();
 * </pre>
 */
public final class JedisExecutor implements ScriptExecutor {
    private final UnifiedJedis jedis;

    public JedisExecutor(UnifiedJedis jedis) {
        this.jedis = jedis;
    }

    @Override
    public Object execute(String key, List<String> command) {
        Protocol.Command cmd = Protocol.Command.valueOf(command.get(0).toUpperCase(java.util.Locale.ROOT));
        String[] args = command.subList(1, command.size()).toArray(new String[0]);
        return jedis.sendCommand(key, cmd, args);
    }
}
