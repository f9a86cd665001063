package dev.selene.node.admin;

import dev.selene.actors.api.SeleneCache;
import org.apache.pekko.actor.Cancellable;

import java.time.Duration;

/**
 * Samples one node's status every interval: the sample feeds the status page's history and Kamon's gauges and
 * counters. Runs on the node's scheduler; a sample that fails (the node stopping) is skipped.
 */
public final class NodeSampler implements AutoCloseable {

    private final Cancellable task;

    private NodeSampler(Cancellable task) {
        this.task = task;
    }

    /** Starts sampling {@code cache} every {@code interval}, the first sample at once. */
    public static NodeSampler start(SeleneCache cache, Duration interval, StatusHistory history,
                                    MetricsBridge metrics) {
        Object lock = new Object();
        Runnable sample = () -> cache.status().whenComplete((s, failure) -> {
            if (s != null) {
                synchronized (lock) {
                    history.add(s, System.currentTimeMillis());
                    metrics.update(s);
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
