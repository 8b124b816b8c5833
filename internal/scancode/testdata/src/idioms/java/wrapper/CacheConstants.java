package fx;

// Key prefixes, as a constants class.
public class CacheConstants {
    public static final String CAPTCHA = "fx:captcha:";
}
