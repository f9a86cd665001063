package dev.selene.actors.value;

/**
 * The answer to one publication. Errors the caller can act on are values here, not exceptions.
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
     * abandoned with {@code reason}, an {@link AbandonReason} label.
     */
    record Abandoned(String reason) implements PublishResult {
    }

    /**
     * The copy or the record's actor failed; its slots were released. {@code reason} is an {@link AbandonReason}
     * label.
     */
    record Failed(String reason, String detail) implements PublishResult {
    }
}
