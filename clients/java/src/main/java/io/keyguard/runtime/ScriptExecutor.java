package io.keyguard.runtime;

import java.util.List;

/**
 * Sends one Redis command and returns its reply: a {@code Long}, a
 * {@code String} or {@code byte[]} (bulk and status replies), a
 * {@code List<Object>}, or {@code null}. An error reply is thrown as any
 * RuntimeException whose message (or a cause's) carries the reply text,
 * e.g. "NOSCRIPT No matching script", as Jedis, Lettuce and Spring do.
 *
 * <p>The adapters for Jedis, Lettuce and Spring's RedisTemplate are one
 * method each (see README.md); {@code key} is the key the command touches,
 * for clients that route by it on a Cluster.
 */
@FunctionalInterface
public interface ScriptExecutor {
    Object execute(String key, List<String> command);
}
