package fx;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.redis.core.StringRedisTemplate;

// Keys built from fields Spring injects from the configuration
// (application.yml, application-*.properties): the configured text, not
// the fields' names.
public class AdminCache {
    @Value("${redis.database}")
    private String REDIS_DATABASE;
    @Value("${redis.key.admin}")
    private String REDIS_KEY_ADMIN;
    @Value("${redis.key.order}")
    private String orderKey;
    @Value("${redis.key.long}")
    private String cartKey;
    @Value("${redis.key.missing:fallback}")
    private String withDefault;
    @Value("${redis.key.region}")
    private String region;
    @Value("${redis.key.unset}")
    private String unset;
    @Value("#{'${redis.key.member}'.toUpperCase()}")
    private String spel;
    private StringRedisTemplate redis;

    public void setAdmin(String username, String v) {
        redis.opsForValue().set(REDIS_DATABASE + ":" + REDIS_KEY_ADMIN + ":" + username, v); // want unregistered-code shop:ums:admin:{username}
    }

    public String order(long id) {
        return redis.opsForValue().get(this.orderKey + ":" + id); // want unregistered-code oms:order:{id:int}
    }

    public String cart(long id) {
        return redis.opsForValue().get(cartKey + ":" + id); // want unregistered-code cart:item:{id:int}
    }

    public String byDefault(long id) {
        return redis.opsForValue().get(withDefault + ":" + id); // want unregistered-code fallback:{id:int}
    }

    public String byRegion(long id) {
        return redis.opsForValue().get("u:" + region + ":" + id); // want unregistered-code u:{region}:{id:int}
    }

    public String byUnset(long id) {
        return redis.opsForValue().get("u:" + unset + ":" + id); // want unregistered-code u:{unset}:{id:int}
    }

    // A call's result, held by a variable: the placeholder is named after it.
    public Long orderNo() {
        String date = new SimpleDateFormat("yyyyMMdd").format(new Date());
        return redis.opsForValue().increment(orderKey + date); // want unregistered-code oms:order{date}
    }

    public String bySpel(long id) {
        return redis.opsForValue().get("m:" + spel + ":" + id); // want unregistered-code m:{spel}:{id:int}
    }
}
