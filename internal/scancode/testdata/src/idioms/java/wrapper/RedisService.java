package fx;

import org.springframework.data.redis.core.StringRedisTemplate;

// A wrapper around the client: its key parameter reaches Redis whole.
public class RedisService {
    @Autowired
    private StringRedisTemplate template;

    public void set(String key, String value) {
        template.opsForValue().set(key, value);
    }

    public void del(String... keys) {
        for (String key : keys) {
            template.delete(key);
        }
    }
}
