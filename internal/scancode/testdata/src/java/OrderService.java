package com.example.order;

import com.example.keys.Keys;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.redisson.api.RedissonClient;
import org.springframework.data.redis.core.StringRedisTemplate;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;

public class OrderService {
    private static final String ORDER_PREFIX = "order:order:";
    private static final String TMP = "tmp:";
    private static final String SCRIPT = "return redis.call('GET', KEYS[1])";

    private final StringRedisTemplate redisTemplate;
    private final JedisPool pool;
    private final RedissonClient redisson;
    private final RedisCommands<String, String> commands;
    private final Map<String, String> local = new HashMap<>();

    public OrderService(StringRedisTemplate t, JedisPool p, RedissonClient r, RedisCommands<String, String> c) {
        this.redisTemplate = t;
        this.pool = p;
        this.redisson = r;
        this.commands = c;
    }

    public String base(long orderId) {
        return redisTemplate.opsForValue().get(ORDER_PREFIX + orderId + ":base"); // want raw-key order:order:{orderId:int}:base
    }

    public void info(long userId, String json) {
        redisTemplate.opsForHash().put("user:" + userId + ":info", "json", json); // want raw-key user:{userId:int}:info
    }

    public void detail(String productNo, String v) {
        String key = "cache:product:"
                + "detail:"
                + productNo;
        redisTemplate.opsForValue().set(key, v); // want raw-key cache:product:detail:{productNo}
    }

    public void report(String day) {
        redisTemplate.delete(TMP + "report:" + day); // want unregistered-code tmp:report:{day}
        redisTemplate.expire("seq:order:no", java.time.Duration.ofDays(1)); // want raw-key seq:order:no
    }

    public void jedis(long skuId, String price) {
        try (Jedis jedis = pool.getResource()) {
            jedis.hset(String.format("promo:sku:%d", skuId), "price", price); // want raw-key promo:sku:{skuId:int}
            jedis.eval(SCRIPT, List.of("seq:order:no"), List.of()); // want raw-key seq:order:no
            jedis.del("tmp:a", Keys.seqOrderNo().key()); // want unregistered-code tmp:a
            jedis.get(new StringBuilder("promo:sku:").append(skuId).toString()); // want raw-key promo:sku:{skuId:int}
        }
    }

    public void redisson(String orderNo, long id) {
        redisson.getLock("lock:order:" + orderNo).lock(); // want unregistered-code lock:order:{orderNo}
        redisson.getMap(String.join(":", "order", "order", String.valueOf(id), "base")).size(); // want raw-key order:order:{id:int}:base
    }

    public String lettuce(long userId) {
        return commands.get("auth:session:u" + userId); // want raw-key auth:session:u{userId:int}
    }

    public void builders(long orderId, long userId) {
        redisTemplate.opsForValue().get(Keys.orderOrderBase(orderId).key());
        Keys.Key k = Keys.userInfo(userId);
        redisTemplate.opsForHash().entries(k.key());
        local.get("tmp:not-redis");
        passThrough(Keys.promoSku(1L));
    }

    private void passThrough(Keys.Key key) {
        commands.hgetall(key.key());
    }
}
