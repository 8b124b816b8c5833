package fx;

import java.util.List;
import java.util.stream.Collectors;
import org.springframework.data.redis.core.StringRedisTemplate;

// Lists of keys a stream maps to, handed to the client or to the
// project's wrapper.
public class Roles {
    @Autowired
    private RedisService redisService;
    @Autowired
    private StringRedisTemplate template;

    void evict(List<Long> adminIds, List<String> names) {
        String keyPrefix = "fx:res:";
        List<String> keys = adminIds.stream().map(adminId -> keyPrefix + adminId).collect(Collectors.toList()); // want unregistered-code fx:res:{adminId} via RedisService.del
        redisService.del(keys);
        redisService.del(names.stream().filter(n -> !n.isEmpty()).map(n -> "fx:name:" + n).distinct().toList()); // want unregistered-code fx:name:{n} via RedisService.del
        template.delete(adminIds.stream().map(id -> "fx:role:" + id).collect(Collectors.toSet())); // want unregistered-code fx:role:{id}
        redisService.del(List.of("fx:one", // want unregistered-code fx:one via RedisService.del
            "fx:two")); // want unregistered-code fx:two via RedisService.del
        // Joined into one string: not a list of keys.
        String joined = names.stream().map(n -> "fx:j:" + n).collect(Collectors.joining(","));
        template.delete(joined); // want raw-key {joined}
    }
}
