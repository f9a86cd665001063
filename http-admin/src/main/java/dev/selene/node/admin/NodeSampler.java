package dev.selene.node.admin;

import dev.selene.actors.api.SeleneCache;
import org.apache.pekko.actor.Cancellable;

import java.time.Duration;

/**
 * Samples one node's status every interval for the status page's history. Runs on the node's scheduler; a sample
 * that fails (the node stopping) is skipped.
 */
public final class NodeSampler implements AutoCloseable {

    private final Cancellable task;

    private NodeSampler(Cancellable task) {
        this.task = task;
    }

    /** Starts sampling {@code cache} every {@code interval}, the first sample at once. */
    public static NodeSampler start(SeleneCache cache, Duration interval, StatusHistory history) {
        Object lock = new Object();
        Runnable sample = () -> cache.status().whenComplete((s, failure) -> {
            if (s != null) {
                synchronized (lock) {
                    history.add(s, System.currentTimeMillis());
                }
            }
        });
        Cancellable c = cache.system().scheduler().scheduleAtFixedRate(Duration.ZERO, interval, sample,
                cache.system().executionContext());
        return new NodeSampler(c);
    }

    @Override
    public void close() {
        task.cancel();
    }
}
