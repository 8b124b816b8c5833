package fx;

// Spring Cache keys under the configured prefixes.
public class Products {
    @Cacheable(value = "product", key = "'detail:' + #productNo") // want raw-key cache:product:detail:{productNo} via @Cacheable
    public String detail(String productNo) { return ""; }

    @Cacheable(value = "fxuser", key = "#id") // want unregistered-code app:fxuser::{id:int} via @Cacheable
    public String user(long id) { return ""; }

    @CachePut(cacheNames = "fxorder", key = "'o:' + #id") // want unregistered-code app:fxorder:o:{id:int} via @CachePut
    public String order(long id) { return ""; }

    @Cacheable(value = "fxsession", key = "#id") // want unregistered-code sess:{id:int} via @Cacheable
    public String session(long id) { return ""; }

    @CacheEvict(value = "fxcart", key = "'c:' + #id") // want unregistered-code c:{id:int} via @CacheEvict
    public void evictCart(long id) {}
}
