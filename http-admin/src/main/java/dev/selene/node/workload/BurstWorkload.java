package dev.selene.node.workload;

import dev.selene.actors.api.SeleneCache;
import dev.selene.transport.gpu.DeviceCopier;

import java.io.PrintStream;

/**
 * One run of the burst workload on a node that keeps running: its conversations generated and prefilled on the
 * node's device, published under the snapshot budget, then probed and every restored byte verified; the node's
 * records stay when it returns. What a served node drives into itself ({@code selene serve --workload}); the
 * benchmark harness ({@code selene burst}, {@code selene soak}) runs the same steps with its measurements around them.
 */
public final class BurstWorkload {

    private final WorkloadSettings settings;
    private final PrintStream progressOut;

    /** A run of {@code settings}, with its progress lines (when the settings ask for them) on {@code progressOut}. */
    public BurstWorkload(WorkloadSettings settings, PrintStream progressOut) {
        this.settings = settings;
        this.progressOut = progressOut;
    }

    /** Runs the publications and the probe against {@code cache}, started on {@code copier}, and returns the result. */
    public RoundResult runOn(SeleneCache cache, DeviceCopier copier) throws InterruptedException {
        Conversations conversations = Conversations.generate(settings);
        boolean durableTier = !cache.config().memoryOnly();
        var counters = cache.counters();
        // the node's counters run for its whole life: a run's verdict takes what changed during the run
        long diskFullBefore = counters.get("disk.full");
        long droppedBefore = counters.get("spill.dropped");
        try {
            conversations.prefill(copier, progressOut);
            PublishTally publish = PublishPhase.run(cache, conversations, progressOut, PublishPhase.Watch.NONE);
            ProbeTally probe = RestoreProbe.run(cache, copier, conversations, progressOut, "probe");
            return new RoundResult(publish, probe, null, durableTier, cache.config().warmBytes(),
                    counters.get("disk.full") - diskFullBefore, counters.get("spill.dropped") - droppedBefore);
        } finally {
            conversations.freeSnapshots(copier);
        }
    }
}
