package fx;

// Spring Cache keys under the configured prefixes.
public class Products {
    @Cacheable(value = "product", key = "'detail:' + #productNo") // want raw-key cache:product:detail:{productNo} via @Cacheable
    public String detail(String productNo) { return ""; }

    @Cacheable(value = "fxuser", key = "#id") // want unregistered-code app:fxuser::{id:int} via @Cacheable
    public String user(long id) { return ""; }

    @CachePut(cacheNames = "fxorder", key = "'o:' + #id") // want unregistered-code app:fxorder:o:{id:int} via @CachePut
    public String order(long id) { return ""; }
}
