package io.keyguard.runtime;

/** The key exists and is not a hash: {@link #foundType()} is the Redis type found. */
public final class WrongTypeException extends ConflictException {
    private static final long serialVersionUID = 1L;
    private final String foundType;

    public WrongTypeException(String key, String foundType, String caller, String op) {
        super(String.format("keyguard: %s \"%s\" by namespace \"%s\" refused: the key holds a %s, not a guarded hash "
                + "(another writer stores a different type under this key; give one of them another key template)",
                op, key, caller, foundType), key, caller, op);
        this.foundType = foundType;
    }

    public String foundType() {
        return foundType;
    }
}
