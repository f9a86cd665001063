package dev.selene.actors.api;

import dev.selene.actors.value.PublishResult;
import dev.selene.engine.key.RecordSpec;
import dev.selene.transport.gpu.DevicePlacement;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The publication loop (publish, retry while told to, give up when the snapshot ends) for embedders. The node itself holds a publication that waits for slots for as long
 * as the lease says it lives ({@link SnapshotLease#remaining()}) and answers {@code Abandoned} when it ends first;
 * this helper only retries what the node cannot wait for ({@code Retry(inflight)}, or leases of unknown length),
 * with a growing back-off while the snapshot lives, and counts those abandoned with the last retry reason.
 */
public final class Publisher {

    /** First back-off after a {@code Retry}. */
    public static final long INITIAL_BACKOFF_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
    /** Longest back-off between two attempts. */
    public static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final SeleneCache cache;

    public Publisher(SeleneCache cache) {
        this.cache = cache;
    }

    /** Publishes {@code spec} from {@code snapshot}, retrying while {@code lease} is alive. */
    public CompletionStage<PublishOutcome> publish(RecordSpec spec, DevicePlacement snapshot, SnapshotLease lease) {
        CompletableFuture<PublishOutcome> outcome = new CompletableFuture<>();
        attempt(spec, snapshot, lease, outcome, System.nanoTime(), 1, INITIAL_BACKOFF_NANOS);
        return outcome;
    }

    private void attempt(RecordSpec spec, DevicePlacement snapshot, SnapshotLease lease,
                         CompletableFuture<PublishOutcome> outcome, long startNanos, int attempts, long backoffNanos) {
        CompletionStage<PublishResult> answer;
        try {
            answer = cache.publish(spec, snapshot, lease.remaining());
        } catch (RuntimeException e) {
            // thrown, not answered (a lease whose remaining() fails, a system stopping under the call): on a retry
            // the delayed executor would swallow it and the outcome would never complete
            outcome.completeExceptionally(e);
            return;
        }
        answer.whenComplete((result, failure) -> {
            long latency = System.nanoTime() - startNanos;
            if (failure != null) {
                outcome.completeExceptionally(failure);
                return;
            }
            if (result instanceof PublishResult.Abandoned a) {
                // the node waited for slots while the lease lasted and counted the abandonment itself
                outcome.complete(new PublishOutcome(result, a.reason(), attempts, latency));
                return;
            }
            if (!(result instanceof PublishResult.Retry retry)) {
                outcome.complete(new PublishOutcome(result, null, attempts, latency));
                return;
            }
            if (!lease.alive()) {
                cache.reportAbandoned(spec.key(), retry.reason());
                outcome.complete(new PublishOutcome(result, retry.reason().label(), attempts, latency));
                return;
            }
            Executor later = CompletableFuture.delayedExecutor(backoffNanos, TimeUnit.NANOSECONDS);
            long next = Math.min(MAX_BACKOFF_NANOS, backoffNanos * 2);
            later.execute(() -> attempt(spec, snapshot, lease, outcome, startNanos, attempts + 1, next));
        });
    }
}
