package dev.selene.actors.value;

/**
 * Why a publication was lost between the GPU and host memory: the reason label of {@link PublishResult.Abandoned}
 * and {@link PublishResult.Failed}, and of the abandon counter.
 */
public enum AbandonReason {
    /** The snapshot's lease ended while the publication waited for slots. */
    NO_SPACE("no_space"),
    /** The caller gave up while a publication at the same key was in flight. */
    INFLIGHT("inflight"),
    /** The record needs more slots than allocation could ever grant. */
    OVERSIZE("oversize"),
    /** The device-to-host copy failed. */
    COPY_FAILED("copy_failed"),
    /** The snapshot's placement did not fit the layout, so no copy could be planned. */
    BAD_SNAPSHOT("bad_snapshot"),
    /** The record's actor stopped unexpectedly while it published. */
    RECORD_ACTOR_FAILED("record_actor_failed");

    private final String label;

    AbandonReason(String label) {
        this.label = label;
    }

    /** The abandon reason of a caller that gave up while told {@code Retry(reason)}. */
    public static AbandonReason of(RetryReason reason) {
        return switch (reason) {
            case NO_SPACE -> NO_SPACE;
            case INFLIGHT -> INFLIGHT;
        };
    }

    /** The bounded metric label. */
    public String label() {
        return label;
    }
}
