package fx;

public class Friends {
    @Cacheable(cacheNames = "friend_state", key = "#userId + '_' + #friendUserId") // want unregistered-code app:friend_state::{userId:int}_{friendUserId:int} via @Cacheable
    public Integer state(Long userId, Long friendUserId) { return 0; }
}
