package io.keyguard.runtime;

/** A business field named like the reserved owner field. */
public final class ReservedFieldException extends KeyguardException {
    private static final long serialVersionUID = 1L;

    public ReservedFieldException() {
        super("keyguard: field name " + Guard.RESERVED_FIELD + " is reserved for the owner namespace; rename the business field");
    }
}
