package fx;

// Spring Cache keys with the prefix turned off in the configuration.
public class Sessions {
    @Cacheable(value = "fxsession", key = "'sess:' + #id") // want unregistered-code sess:{id:int} via @Cacheable
    public String session(long id) { return ""; }
}
