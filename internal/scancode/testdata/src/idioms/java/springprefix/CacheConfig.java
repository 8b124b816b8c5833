package fx;

import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.cache.RedisCacheConfiguration;
import org.springframework.data.redis.cache.RedisCacheManager;

// The cache manager's key prefixes, configured in code: every cache's
// keys start with app:name::, the product cache's with cache:product:,
// fxorder's with app:fxorder:, fxsession's with sess:, fxcart's with
// nothing.
public class CacheConfig {
    public static final String PREFIX = "app:";

    @Bean
    public RedisCacheManager cacheManager(RedisConnectionFactory factory) {
        RedisCacheConfiguration base = RedisCacheConfiguration.defaultCacheConfig()
                .entryTtl(Duration.ofMinutes(10))
                .prefixCacheNameWith(PREFIX);
        RedisCacheConfiguration sessions = RedisCacheConfiguration.defaultCacheConfig().prefixKeysWith("sess:");
        Map<String, RedisCacheConfiguration> initial = new HashMap<>();
        initial.put("fxcart", RedisCacheConfiguration.defaultCacheConfig().disableKeyPrefix());
        return RedisCacheManager.builder(factory)
                .cacheDefaults(base)
                .withCacheConfiguration("product", base.computePrefixWith(name -> "cache:" + name + ":"))
                .withCacheConfiguration("fxorder", RedisCacheConfiguration.defaultCacheConfig().computePrefixWith(cacheName -> {
                    return PREFIX + cacheName + ":";
                }))
                .withCacheConfiguration("fxsession", sessions)
                .withInitialCacheConfigurations(initial)
                .build();
    }
}
