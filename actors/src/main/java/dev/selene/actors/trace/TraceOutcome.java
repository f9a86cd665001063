package dev.selene.actors.trace;

import dev.selene.actors.value.AbandonReason;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RetryReason;

/**
 * The outcomes a trace event names: constants, and every {@code Retry(reason)}, {@code Abandoned(reason)} and
 * {@code Failed(reason)} built once, so that recording an outcome allocates nothing.
 */
public final class TraceOutcome {

    /** A publication's record became resident. */
    public static final String STORED = "Stored";
    /** A publication found the record already there. */
    public static final String PRESENT = "Present";
    /** A publication needed more slots than could ever be granted. */
    public static final String OVERSIZE = "Oversize";
    /** A publication found no tier configured. */
    public static final String DISABLED = "Disabled";
    /** A record's file was committed: the record is clean. */
    public static final String SPILLED = "Spilled";
    /** A record's write was given up. */
    public static final String SPILL_GIVEN_UP = "SpillGivenUp";
    /** A record was retired to the pool. */
    public static final String RETIRED = "Retired";
    /** A record was copied back to the GPU. */
    public static final String RESTORED = "Restored";
    /** A restore gave up before the record reached the GPU. */
    public static final String RESTORE_FAILED = "RestoreFailed";
    /** A record left memory (evicted, expired, dropped). */
    public static final String EVICTED = "Evicted";

    private static final AbandonReason[] REASONS = AbandonReason.values();
    private static final String[] RETRY = new String[RetryReason.values().length];
    private static final String[] ABANDONED = new String[AbandonReason.values().length];
    private static final String[] FAILED = new String[AbandonReason.values().length];

    static {
        for (RetryReason r : RetryReason.values()) {
            RETRY[r.ordinal()] = "Retry(" + r.label() + ")";
        }
        for (AbandonReason r : AbandonReason.values()) {
            ABANDONED[r.ordinal()] = "Abandoned(" + r.label() + ")";
            FAILED[r.ordinal()] = "Failed(" + r.label() + ")";
        }
    }

    private TraceOutcome() {
    }

    /** {@code Retry(reason)}. */
    public static String retry(RetryReason reason) {
        return RETRY[reason.ordinal()];
    }

    /** {@code Abandoned(reason)}. */
    public static String abandoned(AbandonReason reason) {
        return ABANDONED[reason.ordinal()];
    }

    /** {@code Failed(reason)}. */
    public static String failed(AbandonReason reason) {
        return FAILED[reason.ordinal()];
    }

    /** The outcome that answers a publication with {@code result}. */
    public static String of(PublishResult result) {
        return switch (result) {
            case PublishResult.Stored s -> STORED;
            case PublishResult.Present p -> PRESENT;
            case PublishResult.Retry r -> retry(r.reason());
            case PublishResult.Oversize o -> OVERSIZE;
            case PublishResult.Disabled d -> DISABLED;
            case PublishResult.Abandoned a -> labelled(ABANDONED, a.reason(), "Abandoned");
            case PublishResult.Failed f -> labelled(FAILED, f.reason(), "Failed");
        };
    }

    private static String labelled(String[] built, String label, String name) {
        for (AbandonReason r : REASONS) {
            if (r.label().equals(label)) {
                return built[r.ordinal()];
            }
        }
        return name + "(" + label + ")";
    }
}
