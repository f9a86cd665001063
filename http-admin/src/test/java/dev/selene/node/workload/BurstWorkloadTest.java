package dev.selene.node.workload;

import dev.selene.actors.api.SeleneCache;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.io.PrintStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runs of the burst workload on a node that keeps running, as {@code serve --workload} drives them. */
class BurstWorkloadTest {

    private static final PrintStream NOWHERE = new PrintStream(OutputStream.nullOutputStream());

    @Test
    void runsOnARunningNode_storeEveryPublication_restoreEveryConversationVerified_andTheNodeKeepsEveryRunsRecords()
            throws Exception {
        Layout layout = Layout.small();
        WorkloadSettings first = settings(layout, 7);
        WorkloadSettings next = settings(layout, 8);
        long warm = first.slotsNeeded() * layout.slotBytes() * 3;
        try (SimulatedDevice device = SimulatedDevice.create();
             SeleneCache cache = SeleneCache.start(CacheConfig.memoryOnly(layout, warm).withConcurrency(4), device)) {
            RoundResult result = new BurstWorkload(first, NOWHERE).runOn(cache, device);

            assertEquals(8L * 4, result.published(), "every record of every conversation published");
            assertEquals(result.published(), result.publish().stored(), "a warm tier three times the run keeps all");
            assertEquals(8, result.probe().full(), "every conversation restored in full");
            assertEquals(8L * 4, result.probe().verifiedRecords(), "every restored record checked byte for byte");
            assertTrue(result.complete() && result.verdict().startsWith("verdict: OK: "), result.verdict());
            assertEquals(8 * 4, cache.status().toCompletableFuture().join().residentRecords(),
                    "the node keeps the run's records");

            RoundResult again = new BurstWorkload(next, NOWHERE).runOn(cache, device);

            assertEquals(again.published(), again.publish().stored(), "the next seed's records are new: none present");
            assertTrue(again.complete() && again.probe().full() == 8, again.verdict());
            assertEquals(2 * 8 * 4, cache.status().toCompletableFuture().join().residentRecords(),
                    "the node keeps both runs' records");
        }
    }

    /** Eight conversations of four records in two turns, four at once, with snapshots that outlive the run. */
    private static WorkloadSettings settings(Layout layout, long seed) {
        return new WorkloadSettings(layout, 8, 4, 4 * layout.tokensPerRecord(), 2, 30_000, seed, false);
    }
}
