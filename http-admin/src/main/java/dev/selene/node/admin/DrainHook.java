package dev.selene.node.admin;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Spills every parked record to a durable tier (drain on shutdown): {@code POST /drain} and a node's shutdown with
 * {@code drain-on-shutdown} call it. A node without a disk or pool tier has nothing to drain.
 */
@FunctionalInterface
public interface DrainHook {

    /** The outcome of a drain: records written and skipped, and a sentence for people. */
    record DrainReport(boolean drained, long written, long skipped, String detail) {
    }

    /** Drains within {@code timeout}. */
    CompletionStage<DrainReport> drain(Duration timeout);

    /** The hook of a node with no durable tier: nothing is parked anywhere it could go. */
    static DrainHook nothingToDrain(String why) {
        return timeout -> CompletableFuture.completedFuture(new DrainReport(false, 0, 0, why));
    }
}
