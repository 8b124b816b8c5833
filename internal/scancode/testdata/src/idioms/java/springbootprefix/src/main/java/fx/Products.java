package fx;

// Spring Cache keys under the prefix of the configuration files.
public class Products {
    @Cacheable(value = "product", key = "'detail:' + #productNo") // want unregistered-code shop:product::detail:{productNo} via @Cacheable
    public String detail(String productNo) { return ""; }
}
