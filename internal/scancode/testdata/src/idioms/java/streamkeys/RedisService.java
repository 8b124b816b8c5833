package fx;

import java.util.Collection;
import org.springframework.data.redis.core.StringRedisTemplate;

// A wrapper whose parameter is a list of keys.
public class RedisService {
    @Autowired
    private StringRedisTemplate template;

    public Long del(Collection<String> keys) {
        return template.delete(keys);
    }
}
