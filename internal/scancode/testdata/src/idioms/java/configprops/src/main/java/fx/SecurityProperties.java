package fx;

import lombok.Data;
import org.springframework.boot.context.properties.ConfigurationProperties;

// Lombok writes the getters: the source shows none.
@Data
@ConfigurationProperties(prefix = "jwt")
public class SecurityProperties {
    private String header, onlineKey;
    private String codeKey;
    private String unsetKey;

    public String getCodeKey() {
        return codeKey;
    }
}
