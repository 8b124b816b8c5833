package io.keyguard.runtime;

/**
 * The guarded key belongs to another namespace ({@link ForeignOwnerException})
 * or holds another type ({@link WrongTypeException}). Retrying cannot help.
 */
public class ConflictException extends KeyguardException {
    private static final long serialVersionUID = 1L;
    private final String key, caller, op;

    ConflictException(String message, String key, String caller, String op) {
        super(message);
        this.key = key;
        this.caller = caller;
        this.op = op;
    }

    /** The guarded key. */
    public String key() {
        return key;
    }

    /** The namespace that was refused (ours). */
    public String caller() {
        return caller;
    }

    /** The guard operation: set, get, getall, owner or delete. */
    public String op() {
        return op;
    }
}
