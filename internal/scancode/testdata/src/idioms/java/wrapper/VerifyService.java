package fx;

public interface VerifyService {
    void check(String key);
}
