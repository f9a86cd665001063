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

    @Test
    void aDiskFullBeforeARun_faultInjected_isNotThatRunsVerdict() throws Exception {
        Layout layout = Layout.small();
        WorkloadSettings settings = settings(layout, 7);
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory(
                java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", "workload-tests")), "full");
        long warm = settings.slotsNeeded() * layout.slotBytes() * 3; // the run never needs the disk
        CacheConfig config = CacheConfig.memoryOnly(layout, warm).withConcurrency(4)
                .withDisk(dir.toString(), 64L << 20);
        java.util.concurrent.atomic.AtomicReference<dev.selene.transport.disk.FaultInjectingRecordIo> io =
                new java.util.concurrent.atomic.AtomicReference<>();
        try (SimulatedDevice device = SimulatedDevice.create();
             SeleneCache cache = SeleneCache.start(config, device, executor -> {
                 io.set(new dev.selene.transport.disk.FaultInjectingRecordIo(executor, 4));
                 return io.get();
             })) {
            // an earlier incident on the node: a drain that found the disk full
            io.get().failPreallocation(dev.selene.transport.disk.NativeIo.ENOSPC);
            new BurstWorkload(settings(layout, 6), NOWHERE).runOn(cache, device);
            cache.drain(java.time.Duration.ofSeconds(20)).toCompletableFuture().join();
            assertTrue(cache.counters().get("disk.full") > 0, "the drain found the disk full");

            RoundResult next = new BurstWorkload(settings, NOWHERE).runOn(cache, device);
            assertEquals(0, next.diskFull(), "the run itself found no disk full");
            assertTrue(next.verdict().startsWith("verdict: OK: "), next.verdict());
        }
    }

    /** Eight conversations of four records in two turns, four at once, with snapshots that outlive the run. */
    private static WorkloadSettings settings(Layout layout, long seed) {
        return new WorkloadSettings(layout, 8, 4, 4 * layout.tokensPerRecord(), 2, 30_000, seed, false);
    }
}
