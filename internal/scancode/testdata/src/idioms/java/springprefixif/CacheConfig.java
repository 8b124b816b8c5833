package fx;

import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.cache.RedisCacheConfiguration;

// A prefix set only under a condition (as yudao's disableKeyPrefix() when
// use-key-prefix is false, which it is not by default) is not the keys'
// prefix; the one set unconditionally is.
public class CacheConfig {
    @Bean
    public RedisCacheConfiguration redisCacheConfiguration(CacheProperties cacheProperties) {
        RedisCacheConfiguration config = RedisCacheConfiguration.defaultCacheConfig();
        config = config.prefixCacheNameWith("app:");
        if (!cacheProperties.getRedis().isUseKeyPrefix()) {
            config = config.disableKeyPrefix();
        }
        return cacheProperties.isDebug() ? config.prefixKeysWith("debug:") : config;
    }
}
