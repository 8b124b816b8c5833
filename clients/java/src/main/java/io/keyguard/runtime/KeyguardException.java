package io.keyguard.runtime;

/** Base class of the runtime's errors. Nothing was written when one is thrown. */
public class KeyguardException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public KeyguardException(String message) {
        super(message);
    }

    public KeyguardException(String message, Throwable cause) {
        super(message, cause);
    }
}
