package io.keyguard.runtime.spring;

import io.keyguard.runtime.ScriptExecutor;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisTemplate;

/**
 * A {@link ScriptExecutor} over Spring Data Redis: each command runs as
 * {@code RedisConnection.execute(command, args)} inside
 * {@code template.execute(RedisCallback)}, on whichever driver the
 * connection factory uses (Lettuce or Jedis). Error replies arrive wrapped
 * by Spring (e.g. {@code RedisSystemException}); the Guard reads the reply
 * text from the cause chain. On a Redis Cluster connection factory, give the
 * Guard a {@code LettuceExecutor} or {@code JedisExecutor} of the cluster
 * client instead: Spring's generic execute does not route by key.
 *
 * <pre>
 * Guard g = Guard.builder(new RedisTemplateExecutor(stringRedisTemplate), "order-service:order")
 *     .ttl(Duration.ofHours(1)).build();
 * </pre>
 */
public final class RedisTemplateExecutor implements ScriptExecutor {
    private final RedisTemplate<?, ?> template;

    public RedisTemplateExecutor(RedisTemplate<?, ?> template) {
        this.template = template;
    }

    @Override
    public Object execute(String key, List<String> command) {
        byte[][] args = new byte[command.size() - 1][];
        for (int i = 1; i < command.size(); i++) {
            args[i - 1] = command.get(i).getBytes(StandardCharsets.UTF_8);
        }
        return template.execute((RedisCallback<Object>) conn -> conn.execute(command.get(0), args));
    }
}
