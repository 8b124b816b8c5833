package fx;

import org.springframework.data.redis.core.StringRedisTemplate;

public class OnlineUsers {
    private final SecurityProperties properties;
    private StringRedisTemplate redis;

    public void save(String token, String user) {
        redis.opsForValue().set(properties.getOnlineKey() + token, user); // want unregistered-code online_token:{token}
    }

    public String captcha(String uuid) {
        return redis.opsForValue().get(properties.getCodeKey() + uuid); // want unregistered-code captcha_code:{uuid}
    }

    public String unset(String id) {
        return redis.opsForValue().get(properties.getUnsetKey() + id); // want raw-key {unsetKey}{id}
    }
}
