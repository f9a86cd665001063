package dev.selene.actors.value;

/** Why a publication must be retried; the label is also the abandon reason when the caller gives up. */
public enum RetryReason {
    /** A publication at the same key is still in flight. */
    INFLIGHT("inflight"),
    /** No free slots right now; spilling or eviction is making room. */
    NO_SPACE("no_space");

    private final String label;

    RetryReason(String label) {
        this.label = label;
    }

    /** The bounded metric label. */
    public String label() {
        return label;
    }
}
