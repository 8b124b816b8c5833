package fx;

// Spring Cache: name::key, the name from the annotation or @CacheConfig.
@CacheConfig(cacheNames = "fxconfig")
public class Caches {
    @Cacheable(key = "'all'") // want unregistered-code fxconfig::all via @Cacheable
    public String all() { return ""; }

    @CacheEvict(value = "fxuser", key = "'u:' + #id") // want unregistered-code fxuser::u:{id:int} via @CacheEvict
    public void evict(long id) {}

    @CacheEvict(value = "fxuser", allEntries = true)
    public void evictAll() {}

    // A property of a parameter: the placeholder is named after it.
    @CacheEvict(value = "fxdetails", key = "#user.username") // want unregistered-code fxdetails::{username} via @CacheEvict
    public void update(UserDTO user) {}
}
