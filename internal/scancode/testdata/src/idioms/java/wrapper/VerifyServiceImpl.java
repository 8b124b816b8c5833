package fx;

// An implementation that hands its parameter to the wrapper: one more
// function between the caller and the client.
public class VerifyServiceImpl implements VerifyService {
    private final RedisService redisService;

    public void check(String key) {
        redisService.del(key);
    }
}
