package dev.selene.actors.pool;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The deadlines of a host's transfers to and from the pool: what to do when a transfer has not ended in time, dropped
 * (with everything it holds, a fetch's buffers included) as soon as the transfer ends, so that a host restoring many
 * records a second holds only those still in flight.
 */
final class TransferDeadlines {

    private static final ScheduledThreadPoolExecutor TIMER = timer();

    private TransferDeadlines() {
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "selene-pool-deadlines");
            thread.setDaemon(true);
            return thread;
        });
        t.setRemoveOnCancelPolicy(true);
        return t;
    }

    /** Runs {@code onLate} after {@code deadline} unless {@code done} has completed by then. */
    static void unlessDone(CompletableFuture<?> done, Duration deadline, Runnable onLate) {
        ScheduledFuture<?> task = TIMER.schedule(() -> {
            if (!done.isDone()) {
                onLate.run();
            }
        }, deadline.toMillis(), TimeUnit.MILLISECONDS);
        done.whenComplete((v, e) -> task.cancel(false));
    }

    /** Deadlines not yet due (for tests: a finished transfer leaves none behind). */
    static int pending() {
        return TIMER.getQueue().size();
    }
}
