package fx;

import java.util.Map;
import org.redisson.api.RedissonClient;

public class Clients {
    private RedissonClient redisson;
    private Map<String, String> redisMap;
    private RedisProperties redisProperties;

    void lock(String orderId) {
        redisson.getLock("fx:lock:" + orderId).lock(); // want unregistered-code fx:lock:{orderId}
        redisMap.get("fx:not-a-key"); // a Map named like a client is no client
        redisProperties.get("fx:not-a-key");
    }
}
