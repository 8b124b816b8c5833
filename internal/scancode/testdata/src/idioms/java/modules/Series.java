package fx;

import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.json.Path2;

public class Series {
    private final JedisPooled jedis = new JedisPooled();

    void record(String sensor, long ts, double value) {
        jedis.tsAdd("fx:ts:" + sensor, ts, value); // want unregistered-code fx:ts:{sensor}
        jedis.tsRange("fx:ts:" + sensor, 0, ts); // want unregistered-code fx:ts:{sensor}
        jedis.jsonSet("fx:doc:" + sensor, Path2.ROOT_PATH, "{}"); // want unregistered-code fx:doc:{sensor}
        jedis.bfAdd("fx:seen:" + sensor, "x"); // want unregistered-code fx:seen:{sensor}
    }
}
