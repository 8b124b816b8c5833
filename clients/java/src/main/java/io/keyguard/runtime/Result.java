package io.keyguard.runtime;

/** What one guarded write did. */
public final class Result {
    /** Fields that did not exist before. */
    public final int added;
    /** Existing fields that were overwritten. */
    public final int updated;
    /** The key had no owner and is now ours. */
    public final boolean claimed;
    /** Claimed, and the hash already existed without an owner. */
    public final boolean adopted;
    /** This write set the key's TTL (it had none). */
    public final boolean ttlSet;

    Result(int added, int updated, boolean claimed, boolean adopted, boolean ttlSet) {
        this.added = added;
        this.updated = updated;
        this.claimed = claimed;
        this.adopted = adopted;
        this.ttlSet = ttlSet;
    }

    @Override
    public String toString() {
        return "Result{added=" + added + ", updated=" + updated + ", claimed=" + claimed + ", adopted=" + adopted
                + ", ttlSet=" + ttlSet + "}";
    }
}
