import redis.clients.jedis.Jedis;

// Wrappers that hand Jedis their variadic arguments whole: the keys are
// their callers' arguments, at the command's key positions.
public class Store {
    private final Jedis jedis = new Jedis();

    public long remove(String... keys) {
        return jedis.del(keys);
    }

    // EVALSHA sha 1 key arg…: the one key is its caller's first argument
    public Object runOne(String sha, String... keyAndArgs) {
        return jedis.evalsha(sha, 1, keyAndArgs);
    }

    public void drop(long id) {
        remove("fx:varargs:" + id + ":a", "fx:varargs:" + id + ":b"); // want unregistered-code fx:varargs:{id:int}:a via Store.remove | want unregistered-code fx:varargs:{id:int}:b via Store.remove
        runOne("x", "fx:varargs:" + id + ":lock", "fx:not:a:key"); // want unregistered-code fx:varargs:{id:int}:lock via Store.runOne
    }
}
