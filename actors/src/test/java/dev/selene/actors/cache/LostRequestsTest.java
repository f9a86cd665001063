package dev.selene.actors.cache;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.store.Store;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.EvictOutcome;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RecordDescription;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.RecordFileNames;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests lost to a failing actor, and answers that must not wait: a write whose request never reached the disk
 * store, a read lost the same way, a request that may not wait behind one that does (test doubles inject the
 * failures through the fault-injection seam).
 */
class LostRequestsTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "lost";

    private final SimulatedDevice copier = SimulatedDevice.create();
    private final List<Long> deviceAllocations = new ArrayList<>();
    private final List<SeleneCache> nodes = new ArrayList<>();
    private Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        Path base = Path.of("target", "lost-request-tests");
        Files.createDirectories(base);
        dir = Files.createTempDirectory(base, "node");
    }

    @AfterEach
    void stop() {
        nodes.forEach(n -> {
            try {
                n.close();
            } catch (RuntimeException ignored) {
                // a node left hanging by a failed test
            }
        });
        deviceAllocations.forEach(copier::freeDevice);
        copier.close();
    }

    private SeleneCache node(FaultInjection faults) {
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 20L * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true)).withHostBudgetBytes(30L * LAYOUT.slotBytes())
                .withDisk(dir.toString(), 64L << 20);
        SeleneCache cache = SeleneCache.start(config, HostCache.Parts.of(copier).withFaults(faults)
                .withWriteCheck(Duration.ofSeconds(1)));
        nodes.add(cache);
        return cache;
    }

    private DevicePlacement snapshot(RecordSpec s) {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, s.hasRow()));
        deviceAllocations.add(base);
        DevicePlacement p = DevicePlacement.contiguous(LAYOUT, base, s.hasRow());
        KeyedContent.fillRecord(copier, LAYOUT, p, s.key(), s.hasRow());
        return p;
    }

    private DevicePlacement target(RecordSpec s) {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, s.hasRow()));
        deviceAllocations.add(base);
        return DevicePlacement.contiguous(LAYOUT, base, s.hasRow());
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    /**
     * Store.Settle answers from {@code ended}, a map of past outcomes keyed by record key that nothing clears
     * when the file is deleted. A record whose earlier file was deleted (operator eviction here; also PARENT_GONE,
     * eviction for room, expiry, fileLost) is republished; its record actor fails on Spill before sending Write;
     * the catalog's Settle gets the stale Written of the earlier write and marks the record clean on disk. The drain
     * counts it written, yet no file exists: with drain-on-shutdown the record is lost, and a clean record may be
     * dropped from memory at once.
     */
    @Test
    void settleAfterARecordActorFailsOnSpill_takesAStaleOutcome_andCommitsAFileThatDoesNotExist() throws Exception {
        FailOnce fault = new FailOnce("RecordActor", "Spill");
        SeleneCache cache = node(fault);
        RecordSpec s = new RecordSpec(new RecordKey(NS, 7), null, true);
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(s, snapshot(s), Duration.ofSeconds(5))));
        DrainReport first = await(cache.drain(Duration.ofSeconds(10)));
        assertEquals(1, first.written(), first.toString());
        Path file = RecordFileNames.recordFile(dir, s.key());
        assertTrue(Files.exists(file));

        assertEquals(EvictOutcome.Result.EVICTED, await(cache.evict(s.key())).result());
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(s, snapshot(s), Duration.ofSeconds(5))));
        fault.arm();
        DrainReport second = await(cache.drain(Duration.ofSeconds(10)));
        assertEquals(1, fault.fired(), "the record actor failed on its Spill");

        RecordDescription d = await(cache.describe(s.key()));
        boolean catalogSaysOnDisk = d.record() != null && d.record().onDisk();
        assertTrue(!catalogSaysOnDisk || Files.exists(file), "the catalog says " + s.key() + " is on disk (drain "
                + second + ", state " + (d.record() == null ? null : d.record().state()) + ") but " + file
                + " does not exist");
    }

    /**
     * The architecture page says a restarted disk store still answers transfers in flight. A Read (or its
     * ReadFinished) handled when the store fails is lost, and RestoreTask has no timeout on reads: the restore
     * never answers, and its staging slots stay taken.
     */
    @Test
    void diskStoreFailingOnARead_theRestoreStillAnswers() throws Exception {
        RecordSpec s = new RecordSpec(new RecordKey(NS, 11), null, true);
        SeleneCache first = node(FaultInjection.NONE);
        assertInstanceOf(PublishResult.Stored.class, await(first.publish(s, snapshot(s), Duration.ofSeconds(5))));
        assertEquals(1, await(first.drain(Duration.ofSeconds(10))).written());
        first.close();
        nodes.remove(first);

        FailOnce fault = new FailOnce("DiskStore", "Read");
        SeleneCache cache = node(fault);
        fault.arm();
        RestoreResult r = await(cache.restore(NS, new long[] {s.key().hash()}, List.of(target(s)),
                Duration.ofHours(1)));
        assertEquals(1, fault.fired(), "the disk store failed on the restore's read");
        assertNotEquals(RestoreResult.Outcome.MISS, r.outcome(), "the record was found, then read: " + r);
    }
}
