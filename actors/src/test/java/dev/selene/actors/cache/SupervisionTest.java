package dev.selene.actors.cache;

import dev.selene.actors.api.NodeInvariants;
import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.EvictOutcome;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the node does when each kind of its actors fails during a burst: an exception is injected into one actor
 * (a test double of the fault-injection seam throws when that actor is shown a chosen message), and the test shows
 * what the rest of the node does, as the supervision table in the architecture page says.
 */
class SupervisionTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "supervision";
    private static final int CHAINS = 8;
    private static final int CHAIN_LENGTH = 3;

    private final SimulatedDevice copier = SimulatedDevice.create();
    private final List<Long> deviceAllocations = new ArrayList<>();
    private final List<SeleneCache> nodes = new ArrayList<>();
    private Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        Path base = Path.of("target", "supervision-tests");
        Files.createDirectories(base);
        dir = Files.createTempDirectory(base, "node");
    }

    @AfterEach
    void stop() {
        nodes.forEach(SeleneCache::close);
        deviceAllocations.forEach(copier::freeDevice);
        copier.close();
    }

    /** A node of 20 warm slots over a disk: a burst of 24 records spills most of them. */
    private SeleneCache node(FaultInjection faults) {
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 20L * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true)).withHostBudgetBytes(30L * LAYOUT.slotBytes())
                .withDisk(dir.toString(), 64L << 20);
        SeleneCache cache = SeleneCache.start(config, HostCache.Parts.of(copier).withFaults(faults)
                .withWriteCheck(Duration.ofSeconds(1)));
        nodes.add(cache);
        return cache;
    }

    private static RecordSpec spec(int chain, int i) {
        long hash = chain * 100L + i;
        return new RecordSpec(new RecordKey(NS, hash), i == 0 ? null : new RecordKey(NS, hash - 1),
                i == CHAIN_LENGTH - 1 || i == 0);
    }

    private DevicePlacement snapshot(RecordSpec s) {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, s.hasRow()));
        deviceAllocations.add(base);
        DevicePlacement p = DevicePlacement.contiguous(LAYOUT, base, s.hasRow());
        KeyedContent.fillRecord(copier, LAYOUT, p, s.key(), s.hasRow());
        return p;
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    /** Publishes every chain, all chains at once, each chain's records one after another; returns the outcomes. */
    private List<PublishOutcome> burst(SeleneCache cache) throws Exception {
        Publisher publisher = new Publisher(cache);
        List<CompletableFuture<List<PublishOutcome>>> chains = new ArrayList<>();
        for (int c = 0; c < CHAINS; c++) {
            int chain = c;
            CompletableFuture<List<PublishOutcome>> done = CompletableFuture.completedFuture(new ArrayList<>());
            for (int i = 0; i < CHAIN_LENGTH; i++) {
                RecordSpec s = spec(chain, i);
                done = done.thenCompose(list -> publisher.publish(s, snapshot(s),
                        SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(30))).thenApply(o -> {
                            list.add(o);
                            return list;
                        }));
            }
            chains.add(done);
        }
        List<PublishOutcome> all = new ArrayList<>();
        for (CompletableFuture<List<PublishOutcome>> f : chains) {
            all.addAll(f.get(120, TimeUnit.SECONDS));
        }
        return all;
    }

    /** Restores chain {@code c} and returns how many of its records came back byte-identical (0 on a miss). */
    private int restore(SeleneCache cache, int c) throws Exception {
        long[] keys = new long[CHAIN_LENGTH];
        List<DevicePlacement> targets = new ArrayList<>();
        for (int i = 0; i < CHAIN_LENGTH; i++) {
            RecordSpec s = spec(c, i);
            keys[i] = s.key().hash();
            long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, s.hasRow()));
            deviceAllocations.add(base);
            targets.add(DevicePlacement.contiguous(LAYOUT, base, s.hasRow()));
        }
        RestoreResult r = await(cache.restore(NS, keys, targets, Duration.ofHours(1)));
        if (r.outcome() != RestoreResult.Outcome.RESTORED) {
            return 0;
        }
        for (int i = 0; i < r.records(); i++) {
            RecordSpec s = spec(c, i);
            assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(i), s.key(), s.hasRow()),
                    s.key() + " byte-identical");
        }
        return r.records();
    }

    private void assertServesAndIsConsistent(SeleneCache cache) throws Exception {
        DrainReport drained = await(cache.drain(Duration.ofSeconds(20)));
        assertTrue(!drained.timedOut(), drained.toString());
        assertEquals("", await(NodeInvariants.violation(cache)));
        RecordSpec fresh = spec(90, 0);
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(fresh, snapshot(fresh),
                Duration.ofSeconds(5))), "the node keeps serving");
    }

    @Test
    void recordActorFailingAsItsCopyCompletes_failsOnlyThatPublication_andItsSlotsComeBack() throws Exception {
        FailOnce fault = new FailOnce("RecordActor", "CopyFinished");
        SeleneCache cache = node(fault);
        fault.arm();
        List<PublishOutcome> outcomes = burst(cache);
        assertEquals(1, fault.fired());
        long failed = outcomes.stream().filter(o -> o.result() instanceof PublishResult.Failed f
                && f.reason().equals("record_actor_failed")).count();
        assertEquals(1, failed, outcomes.toString());
        assertEquals(CHAINS * CHAIN_LENGTH - 1, outcomes.stream()
                .filter(o -> o.result() instanceof PublishResult.Stored).count());
        assertEquals(1, cache.counters().get("abandoned.record_actor_failed"));
        assertServesAndIsConsistent(cache);
        int restored = 0;
        for (int c = 0; c < CHAINS; c++) {
            restored += restore(cache, c);
        }
        assertTrue(restored >= (CHAINS - 1) * CHAIN_LENGTH, "every chain but the failed one restores: " + restored);
        assertNoSlotLost(cache);
    }

    /** Evicts every record; then every slot must be free again: none was lost to a failed actor. */
    private void assertNoSlotLost(SeleneCache cache) throws Exception {
        List<RecordKey> roots = new ArrayList<>();
        for (int c = 0; c < CHAINS; c++) {
            roots.add(spec(c, 0).key());
        }
        roots.add(spec(90, 0).key());
        for (RecordKey root : roots) {
            // A record the spill plan is writing right now is busy: evict it once its write has ended.
            Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> await(cache.evict(root)).result() != EvictOutcome.Result.BUSY);
        }
        CacheStatus s = await(cache.status());
        assertEquals(s.totalSlots(), s.freeSlots(), "every slot is back in the pool");
    }

    @Test
    void recordActorFailingAsItsGrantArrives_failsThatPublication_andTheGrantIsReleasedNotLost() throws Exception {
        FailOnce fault = new FailOnce("RecordActor", "Publish"); // the message that carries the slots granted
        SeleneCache cache = node(fault);
        fault.arm();
        List<PublishOutcome> outcomes = burst(cache);
        assertEquals(1, fault.fired());
        assertEquals(1, outcomes.stream().filter(o -> o.result() instanceof PublishResult.Failed).count(),
                outcomes.toString());
        assertServesAndIsConsistent(cache);
        assertNoSlotLost(cache);
    }

    @Test
    void recordActorFailingWhenItsWriteIsAnswered_theCatalogAsksTheStoreHowTheWriteEnded() throws Exception {
        FailOnce fault = new FailOnce("RecordActor", "WriteAnswered");
        SeleneCache cache = node(fault);
        fault.arm();
        burst(cache);
        assertServesAndIsConsistent(cache);
        assertEquals(1, fault.fired());
        for (int c = 0; c < CHAINS; c++) {
            assertEquals(CHAIN_LENGTH, restore(cache, c), "chain " + c);
        }
        CacheStatus s = await(cache.status());
        assertEquals(0, s.disk().writesInFlight());
    }

    @Test
    void restoreTaskFailing_answersFailed_releasesItsPinsAndStaging_andTheNextRestoreWorks() throws Exception {
        FailOnce fault = new FailOnce("RestoreTask", "CopiesFinished");
        SeleneCache cache = node(fault);
        burst(cache);
        fault.arm();
        long[] keys = {spec(0, 0).key().hash(), spec(0, 1).key().hash(), spec(0, 2).key().hash()};
        List<DevicePlacement> targets = new ArrayList<>();
        for (int i = 0; i < CHAIN_LENGTH; i++) {
            long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true));
            deviceAllocations.add(base);
            targets.add(DevicePlacement.contiguous(LAYOUT, base, spec(0, i).hasRow()));
        }
        RestoreResult failed = await(cache.restore(NS, keys, targets, Duration.ofHours(1)));
        assertEquals(RestoreResult.Outcome.FAILED, failed.outcome(), failed.toString());
        assertEquals(CHAIN_LENGTH, restore(cache, 0));
        assertServesAndIsConsistent(cache);
    }

    @Test
    void diskStoreFailing_isRestarted_scansItsDirectoryAgain_andNoWriteIsLost() throws Exception {
        FailOnce fault = new FailOnce("DiskStore", "Write");
        SeleneCache cache = node(fault);
        fault.arm();
        List<PublishOutcome> outcomes = burst(cache);
        assertTrue(outcomes.stream().allMatch(o -> o.result() instanceof PublishResult.Stored), outcomes.toString());
        assertEquals(1, fault.fired());
        assertServesAndIsConsistent(cache);
        for (int c = 0; c < CHAINS; c++) {
            assertEquals(CHAIN_LENGTH, restore(cache, c), "chain " + c);
        }
    }

    @Test
    void slotBookkeepingFailing_stopsTheNode_becauseTheCatalogThatKeepsTheSlotsStopped() throws Exception {
        FailOnce fault = new FailOnce("SlotLedger", "Allocation");
        SeleneCache cache = node(fault);
        try (CapturedErrors errors = new CapturedErrors()) {
            fault.arm();
            RecordSpec s = spec(0, 0);
            cache.publish(s, snapshot(s));
            cache.system().getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
            assertStoppedBy("catalog", fault, errors);
        }
    }

    @Test
    void catalogFailing_stopsTheNode_becauseTheCatalogStopped() throws Exception {
        FailOnce fault = new FailOnce("Catalog", "Lookup");
        SeleneCache cache = node(fault);
        try (CapturedErrors errors = new CapturedErrors()) {
            fault.arm();
            cache.lookup(NS, new long[] {1});
            cache.system().getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
            assertStoppedBy("catalog", fault, errors);
        }
    }

    /**
     * The node stopped because the injected fault fired in {@code child} and the node saw that child stop: not for
     * some other failure on the way.
     */
    private static void assertStoppedBy(String child, FailOnce fault, CapturedErrors errors) {
        assertEquals(1, fault.fired(), "the injected fault fired");
        List<String> stops = errors.lines().stream().filter(l -> l.endsWith("stopped after a failure; stopping the node"))
                .toList();
        assertEquals(List.of(child + " stopped after a failure; stopping the node"), stops,
                "the node stopped because " + child + " did; every error: " + errors.lines());
    }
}
