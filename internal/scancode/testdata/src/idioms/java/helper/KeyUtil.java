package fx;

// A helper that returns a key; its shape is its return's.
public final class KeyUtil {
    private static final String USER = "fx:user:";

    public static String userKey(long id) {
        return USER + id;
    }

    public String orderKey(String no) {
        return String.format("fx:order:%s", no);
    }
}
