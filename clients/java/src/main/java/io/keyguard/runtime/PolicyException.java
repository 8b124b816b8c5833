package io.keyguard.runtime;

import java.util.List;

/**
 * A write the TTL policy refuses; {@link #reason()} is no-policy, type, persistent or schema (the
 * value breaks the template's declared fields: {@link #undeclared()} lists the fields it names
 * that the template does not declare, empty when the value is not a JSON object). Nothing was sent.
 */
public final class PolicyException extends KeyguardException {
    private static final long serialVersionUID = 1L;
    private final String template, reason;
    private final String[] undeclared;

    PolicyException(String op, String key, String template, String reason, String message) {
        this(op, key, template, reason, message, List.of());
    }

    PolicyException(String op, String key, String template, String reason, String message, List<String> undeclared) {
        super("keyguard: " + op + (key == null ? "" : " \"" + key + "\"") + " (template \"" + template + "\"): " + message);
        this.template = template;
        this.reason = reason;
        this.undeclared = undeclared.toArray(new String[0]);
    }

    /** The undeclared fields a write named (reason schema); empty otherwise. */
    public List<String> undeclared() {
        return List.of(undeclared);
    }

    public String template() {
        return template;
    }

    public String reason() {
        return reason;
    }
}
