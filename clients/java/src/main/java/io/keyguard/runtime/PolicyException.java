package io.keyguard.runtime;

/** A write the TTL policy refuses; {@link #reason()} is no-policy, type or persistent. Nothing was sent. */
public final class PolicyException extends KeyguardException {
    private static final long serialVersionUID = 1L;
    private final String template, reason;

    PolicyException(String op, String key, String template, String reason, String message) {
        super("keyguard: " + op + (key == null ? "" : " \"" + key + "\"") + " (template \"" + template + "\"): " + message);
        this.template = template;
        this.reason = reason;
    }

    public String template() {
        return template;
    }

    public String reason() {
        return reason;
    }
}
