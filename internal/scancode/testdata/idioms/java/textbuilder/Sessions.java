package fx;

import org.springframework.data.redis.core.StringRedisTemplate;

// Keys written into a StringBuilder or StringBuffer statement by statement.
public class Sessions {
    private static final String NS = "fx:sess";
    private StringRedisTemplate redis;

    // A helper of one shape: its callers get it.
    private String sessionKey(String id) {
        StringBuilder sb = new StringBuilder(NS);
        sb.append(':');
        sb.append(id).append(":data");
        return sb.toString();
    }

    void touch(String id, long uid, String[] tags, boolean admin, String ns, int size) {
        redis.delete(sessionKey(id)); // want unregistered-code fx:sess:{id}:data

        StringBuffer user = new StringBuffer(64);
        user.append("user:");
        user.append(uid);
        String key = user.append(":info").toString();
        redis.opsForHash().entries(key); // want raw-key user:{uid:int}:info

        // in one chain: the constructor's text comes first, a capacity is no text
        redis.delete(new StringBuilder(ns).append(":fx:").append(id).toString()); // want unregistered-code {ns}:fx:{id}
        redis.delete(new StringBuilder(32).append("user:").append(uid).append(":info").toString()); // want raw-key user:{uid:int}:info
        redis.delete(new StringBuffer(size).append("fx:n:").append(id).toString()); // want unregistered-code fx:n:{id}

        // an append in a loop or a branch, or another use, is not followed
        StringBuilder t = new StringBuilder("fx:tags:");
        for (String tag : tags) {
            t.append(tag);
        }
        redis.opsForValue().get(t.toString()); // want raw-key {t}

        StringBuilder r = new StringBuilder("fx:role:");
        if (admin) {
            r.append("admin");
        }
        redis.opsForValue().get(r.toString()); // want raw-key {r}

        StringBuilder s = new StringBuilder("fx:x:");
        s.setLength(0);
        s.append("y");
        redis.opsForValue().get(s.toString()); // want raw-key {s}
    }
}
