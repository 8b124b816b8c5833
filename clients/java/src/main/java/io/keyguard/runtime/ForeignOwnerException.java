package io.keyguard.runtime;

/** Another namespace owns the key: {@link #owner()} is the namespace found in its reserved field. */
public final class ForeignOwnerException extends ConflictException {
    private static final long serialVersionUID = 1L;
    private final String owner;

    public ForeignOwnerException(String key, String owner, String caller, String op) {
        super(String.format("keyguard: %s \"%s\" by namespace \"%s\" refused: the key belongs to namespace \"%s\" "
                + "(two services build the same key; give one of them its own key template)", op, key, caller, owner),
                key, caller, op);
        this.owner = owner;
    }

    /** The namespace owning the key. */
    public String owner() {
        return owner;
    }
}
