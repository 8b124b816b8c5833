package fx;

public class LoginService {
    @Autowired
    private RedisService redisService;
    @Autowired
    private VerifyService verifyService;

    void login(String uuid, long userId) {
        String verifyKey = CacheConstants.CAPTCHA + uuid;
        redisService.set(verifyKey, "1"); // want unregistered-code fx:captcha:{uuid} via RedisService.set
        redisService.del("fx:a:" + userId, // want unregistered-code fx:a:{userId:int} via RedisService.del
            "fx:b"); // want unregistered-code fx:b via RedisService.del
        verifyService.check("fx:code:" + uuid); // want unregistered-code fx:code:{uuid} via VerifyServiceImpl.check
    }
}
