package dev.selene.actors.api;

/**
 * The answer to one publication (B17). Errors the caller can act on are values here, not exceptions.
 */
public sealed interface PublishResult {

    /** The record is now resident in host memory. */
    record Stored(long bytes) implements PublishResult {
    }

    /** A complete record already exists at that key; nothing was copied. */
    record Present() implements PublishResult {
    }

    /** Not now: try again while the GPU snapshot lives. */
    record Retry(RetryReason reason) implements PublishResult {
    }

    /** The record needs more slots than allocation could ever grant it; retrying cannot help. */
    record Oversize(int slots, int maxSlots) implements PublishResult {
    }

    /** No tier is configured: the cache is off. */
    record Disabled() implements PublishResult {
    }

    /**
     * The node gave the publication up: the caller's snapshot lease ended while it waited for slots. Counted as
     * abandoned with {@code reason}.
     */
    record Abandoned(String reason) implements PublishResult {
    }

    /** The copy or the record's actor failed; its slots were released. {@code reason} is a bounded label. */
    record Failed(String reason, String detail) implements PublishResult {
    }

    /** A short bounded label for metrics: stored, present, retry_inflight, retry_no_space, oversize, ... */
    default String label() {
        return switch (this) {
            case Stored s -> "stored";
            case Present p -> "present";
            case Retry r -> "retry_" + r.reason().label();
            case Oversize o -> "oversize";
            case Disabled d -> "disabled";
            case Failed f -> "failed";
            case Abandoned a -> "abandoned";
        };
    }
}
