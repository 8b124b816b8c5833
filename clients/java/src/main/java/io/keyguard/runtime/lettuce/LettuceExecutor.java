package io.keyguard.runtime.lettuce;

import io.keyguard.runtime.ScriptExecutor;
import io.lettuce.core.api.sync.BaseRedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A {@link ScriptExecutor} over Lettuce 6 synchronous commands of a
 * {@code StatefulRedisConnection<String, String>} or a
 * {@code StatefulRedisClusterConnection<String, String>} ({@code connection.sync()}),
 * through {@code dispatch}; the key is added as a key argument so that the
 * cluster connection routes by it. Error replies arrive as
 * {@code RedisCommandExecutionException} carrying the reply text.
 *
 * <pre>
 * StatefulRedisConnection&lt;String, String&gt; conn = RedisClient.create("redis://localhost").connect();
 * Guard g = Guard.builder(new LettuceExecutor(conn.sync()), "order-service:order").ttl(Duration.ofHours(1)).build();
 * </pre>
 */
public final class LettuceExecutor implements ScriptExecutor {
    /** Commands whose reply is an array: NestedMultiOutput collects every reply into a list. */
    private static final Set<String> ARRAY_REPLIES = Set.of("HMGET", "HGETALL", "EXEC");

    private final BaseRedisCommands<String, String> commands;

    public LettuceExecutor(BaseRedisCommands<String, String> commands) {
        this.commands = commands;
    }

    @Override
    public Object execute(String key, List<String> command) {
        String name = command.get(0).toUpperCase(Locale.ROOT);
        CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8);
        for (int i = 1; i < command.size(); i++) {
            String a = command.get(i);
            if (a.equals(key) && key != null) {
                args.addKey(a);
            } else {
                args.add(a);
            }
        }
        List<Object> out = commands.dispatch(CommandType.valueOf(name), new NestedMultiOutput<>(StringCodec.UTF8), args);
        boolean array = ARRAY_REPLIES.contains(name)
                || (name.startsWith("EVAL") && command.size() > 4 && command.get(4).equals("set"));
        if (array) {
            return out.size() == 1 && out.get(0) instanceof List ? out.get(0) : out;
        }
        return out.isEmpty() ? null : out.get(0);
    }
}
