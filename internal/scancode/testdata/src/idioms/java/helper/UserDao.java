package fx;

import redis.clients.jedis.Jedis;

public class UserDao {
    private Jedis jedis;
    private KeyUtil keys = new KeyUtil();

    String load(long id, String no) {
        jedis.hgetAll(KeyUtil.userKey(id)); // want unregistered-code fx:user:{id:int}
        return jedis.get(keys.orderKey(no)); // want unregistered-code fx:order:{no}
    }
}
