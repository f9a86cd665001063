package dev.selene.actors.cache;

import dev.selene.actors.api.NodeInvariants;
import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.census.ActorCensus;
import dev.selene.actors.trace.TraceEvent;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.LookupResult;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.RetryReason;
import dev.selene.actors.value.Tier;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A memory-only node through its Java API: publication lifecycle (B17), lookup (B14), restore (B16), B5-B7. */
class HostCacheTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "test";

    private final GatedDeviceCopier copier = new GatedDeviceCopier(SimulatedDevice.create());
    private final List<SeleneCache> nodes = new ArrayList<>();
    private final List<Long> deviceAllocations = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        copier.open();
        for (SeleneCache cache : nodes) {
            assertEquals("", NodeInvariants.violation(cache).toCompletableFuture().get(10, TimeUnit.SECONDS),
                    "the catalog's invariants hold after the test");
        }
        nodes.forEach(SeleneCache::close);
        deviceAllocations.forEach(copier::freeDevice);
        copier.close();
    }

    private SeleneCache node(long warmSlots) {
        return node(warmSlots, 1 << 20);
    }

    /** A memory-only node of {@code warmSlots} warm slots in a host budget of {@code budgetSlots} slots. */
    private SeleneCache node(long warmSlots, long budgetSlots) {
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, warmSlots * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true)).withHostBudgetBytes(budgetSlots * LAYOUT.slotBytes());
        SeleneCache cache = SeleneCache.start(config, copier);
        nodes.add(cache);
        return cache;
    }

    private RecordSpec spec(long hash, Long parent, boolean hasRow) {
        return new RecordSpec(new RecordKey(NS, hash), parent == null ? null : new RecordKey(NS, parent), hasRow);
    }

    /** A GPU snapshot of {@code spec} filled with its keyed content. */
    private DevicePlacement snapshot(RecordSpec spec) {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, spec.hasRow()));
        deviceAllocations.add(base);
        DevicePlacement p = DevicePlacement.contiguous(LAYOUT, base, spec.hasRow());
        KeyedContent.fillRecord(copier, LAYOUT, p, spec.key(), spec.hasRow());
        return p;
    }

    private DevicePlacement target(boolean hasRow) {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, hasRow));
        deviceAllocations.add(base);
        return DevicePlacement.contiguous(LAYOUT, base, hasRow);
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void publish_thenRepublish_isPresent() throws Exception {
        SeleneCache cache = node(64);
        RecordSpec s = spec(1, null, true);
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(s, snapshot(s))));
        assertInstanceOf(PublishResult.Present.class, await(cache.publish(s, snapshot(s))));
    }

    @Test
    void aMiss_saysWhy_whetherNothingOrOnlyPageOnlyRecordsAreCached() throws Exception {
        SeleneCache cache = node(64);
        assertEquals("the chain's first record is not cached", await(cache.lookup(NS, new long[] {80, 81}))
                .missReason());
        RecordSpec root = spec(80, null, false);
        RecordSpec mid = spec(81, 80L, false);
        await(cache.publish(root, snapshot(root)));
        await(cache.publish(mid, snapshot(mid)));
        LookupResult miss = await(cache.lookup(NS, new long[] {80, 81, 82}));
        assertEquals(0, miss.depth());
        assertEquals("2 records of the chain cached, none carries a row", miss.missReason());
        RestoreResult r = await(cache.restore(NS, new long[] {80, 81}, List.of(), Duration.ofSeconds(1)));
        assertEquals(RestoreResult.Outcome.MISS, r.outcome());
        assertEquals(miss.missReason(), r.detail());
    }

    @Test
    void republish_whileFirstIsInFlight_isRetryInflight() throws Exception {
        SeleneCache cache = node(64);
        RecordSpec s = spec(2, null, true);
        DevicePlacement snap = snapshot(s);
        copier.close_gate();
        CompletableFuture<PublishResult> first = cache.publish(s, snap).toCompletableFuture();
        PublishResult second = await(cache.publish(s, snap));
        assertEquals(new PublishResult.Retry(RetryReason.INFLIGHT), second);
        copier.open();
        assertInstanceOf(PublishResult.Stored.class, first.get(10, TimeUnit.SECONDS));
    }

    @Test
    void publish_largerThanThePool_isOversizeAtOnce() throws Exception {
        // A 42-slot record in a pool that the host budget holds to 20 slots (1 warm + 19 intake).
        Layout big = new Layout("big-row", 2, 4096, 40 * 4096, 2, 16);
        CacheConfig config = CacheConfig.memoryOnly(big, 4096L * 2).withConcurrency(1).withWindowSlots(4)
                .withHostBudgetBytes(20 * big.slotBytes());
        try (SeleneCache cache = SeleneCache.start(config, copier)) {
            RecordSpec s = new RecordSpec(new RecordKey(NS, 3), null, true);
            PublishResult r = await(cache.publish(s, new DevicePlacement(new long[0])));
            PublishResult.Oversize o = assertInstanceOf(PublishResult.Oversize.class, r);
            assertEquals(42, o.slots());
            assertTrue(o.maxSlots() < 42, "max grant " + o.maxSlots());
            assertEquals(1, cache.counters().get("abandoned.oversize"), "counted");
            assertTrue(cache.traces().trace(s.key()).orElseThrow().stream().anyMatch(e -> e.actor().equals("HostCache")
                    && e.message().contains("the most ever granted")), "traced as the node's answer");
        }
    }

    @Test
    void publications_reachTheCatalogWithoutPassingThroughTheNodesOwnMailbox() throws Exception {
        SeleneCache cache = node(64);
        long nodeMessagesBefore = handled(cache, "HostCache");
        long catalogMessagesBefore = handled(cache, "Catalog");
        for (long k = 60; k < 80; k++) {
            RecordSpec s = spec(k, null, true);
            assertInstanceOf(PublishResult.Stored.class, await(cache.publish(s, snapshot(s))));
        }
        assertEquals(nodeMessagesBefore, handled(cache, "HostCache"), "the node's guardian handled none of them");
        assertTrue(handled(cache, "Catalog") - catalogMessagesBefore >= 20, "the catalog handled each");
    }

    @Test
    void restore_returnsExactlyThePublishedBytes() throws Exception {
        SeleneCache cache = node(64);
        RecordSpec root = spec(10, null, false);
        RecordSpec mid = spec(11, 10L, true);
        RecordSpec leaf = spec(12, 11L, true);
        for (RecordSpec s : List.of(root, mid, leaf)) {
            assertInstanceOf(PublishResult.Stored.class, await(cache.publish(s, snapshot(s))));
        }
        List<DevicePlacement> targets = List.of(target(false), target(true), target(true));
        RestoreResult r = await(cache.restore(NS, new long[] {10, 11, 12}, targets, Duration.ofSeconds(1)));
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome());
        assertEquals(3, r.records());
        assertEquals(3, r.fromMemory());
        assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(0), root.key(), false));
        assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(1), mid.key(), true));
        assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(2), leaf.key(), true));
        assertFalse(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(2), mid.key(), true),
                "the oracle must tell records apart");
    }

    @Test
    void lookup_endsAtDeepestRecordWithRow_pageOnlyRecordsSupplyPagesOnly() throws Exception {
        SeleneCache cache = node(64);
        RecordSpec a = spec(20, null, false);
        RecordSpec b = spec(21, 20L, true);
        RecordSpec c = spec(22, 21L, false);
        for (RecordSpec s : List.of(a, b, c)) {
            await(cache.publish(s, snapshot(s)));
        }
        LookupResult r = await(cache.lookup(NS, new long[] {20, 21, 22, 23}));
        assertEquals(2, r.depth());
        assertEquals(2L * LAYOUT.tokensPerRecord(), r.tokens());
        assertEquals(List.of(Tier.MEMORY, Tier.MEMORY), r.records().stream().map(LookupResult.Located::tier).toList());
        assertEquals(0, await(cache.lookup(NS, new long[] {20})).depth(), "a page-only record never ends a match");
        assertEquals(0, await(cache.lookup(NS, new long[] {99, 21})).depth(), "the chain must be whole");
    }

    @Test
    void aRowPublishedAtARecordHeldWithoutOne_joinsItsPages_andARestoreEndsThere() throws Exception {
        SeleneCache cache = node(64);
        RecordSpec pagesOnly = spec(40, null, false);
        RecordSpec child = spec(41, 40L, true);
        RecordSpec withRow = spec(40, null, true);
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(pagesOnly, snapshot(pagesOnly))));
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(child, snapshot(child))));
        assertEquals(0, await(cache.lookup(NS, new long[] {40})).depth(), "no row there yet");

        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(withRow, snapshot(withRow))),
                "the row is new, not present");
        assertInstanceOf(PublishResult.Present.class, await(cache.publish(withRow, snapshot(withRow))));

        assertEquals(1, await(cache.lookup(NS, new long[] {40})).depth(), "a match ends at the added row");
        List<DevicePlacement> targets = List.of(target(true));
        RestoreResult r = await(cache.restore(NS, new long[] {40}, targets, Duration.ofSeconds(1)));
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome(), r.toString());
        assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(0), withRow.key(), true),
                "the first publication's pages and the second's row, byte for byte");
        List<DevicePlacement> both = List.of(target(true), target(true)); // the root carries its row now
        assertEquals(RestoreResult.Outcome.RESTORED,
                await(cache.restore(NS, new long[] {40, 41}, both, Duration.ofSeconds(1))).outcome());
        assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, both.get(1), child.key(), true), "the child is intact");
        // the slots the second copy's pages took came back: the invariant check after the test holds the ledger
    }

    @Test
    void aRecordAboveTheMatchsEndWithoutTheRowItsTargetHasRoomFor_restoresItsPages_andTheResultSaysTheRowWasLeftOut()
            throws Exception {
        // The row of an earlier turn may be dropped to make room while its pages stay for the records below, after
        // the caller placed the chain: the restore must not fail for it (it did: "record needs 4 device shares").
        SeleneCache cache = node(64);
        RecordSpec parent = spec(50, null, false);
        RecordSpec child = spec(51, 50L, true);
        await(cache.publish(parent, snapshot(parent)));
        await(cache.publish(child, snapshot(child)));
        List<DevicePlacement> targets = List.of(target(true), target(true));
        int rowPiece = LAYOUT.slotsPerRecord(false);
        long rowShare = targets.get(0).address(LAYOUT, rowPiece, 0);
        MemorySegment marker = MemorySegment.ofArray(new byte[LAYOUT.pieceBytes(rowPiece)]).fill((byte) 0x5A);
        copier.writeDevice(rowShare, marker);

        RestoreResult r = await(cache.restore(NS, new long[] {50, 51}, targets, Duration.ofSeconds(1)));

        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome(), r.toString());
        assertEquals(2, r.records());
        assertEquals(List.of(0), r.rowsLeftOut(), "the parent came without the row its target had room for");
        assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(0), parent.key(), false), "its pages");
        assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(1), child.key(), true), "the child whole");
        MemorySegment after = MemorySegment.ofArray(new byte[LAYOUT.pieceBytes(rowPiece)]);
        copier.readDevice(rowShare, after);
        assertEquals(-1, marker.mismatch(after), "the parent's row share is left as it was");
        assertEquals(List.of(), await(cache.restore(NS, new long[] {50, 51},
                List.of(target(false), target(true)), Duration.ofSeconds(1))).rowsLeftOut(), "no room, no row missing");
    }

    @Test
    void aRecordAboveTheMatchsEndThatGainedARow_placedWithoutRoomForIt_restoresItsPages_butTheEndMustBringItsRow()
            throws Exception {
        // The caller placed the chain as a lookup described it, then a row was published at the parent.
        SeleneCache cache = node(64);
        RecordSpec pagesOnly = spec(60, null, false);
        RecordSpec child = spec(61, 60L, true);
        RecordSpec withRow = spec(60, null, true);
        await(cache.publish(pagesOnly, snapshot(pagesOnly)));
        await(cache.publish(child, snapshot(child)));
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(withRow, snapshot(withRow))));

        List<DevicePlacement> targets = List.of(target(false), target(true));
        RestoreResult r = await(cache.restore(NS, new long[] {60, 61}, targets, Duration.ofSeconds(1)));
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome(), r.toString());
        assertEquals(2, r.records());
        assertEquals(List.of(), r.rowsLeftOut(), "no row the target had room for is missing");
        assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(0), withRow.key(), false), "its pages");
        assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(1), child.key(), true), "the child whole");

        RestoreResult end = await(cache.restore(NS, new long[] {60}, List.of(target(false)), Duration.ofSeconds(1)));
        assertEquals(RestoreResult.Outcome.FAILED, end.outcome(), "the record that ends the match needs room for its "
                + "row: " + end);
    }

    @Test
    void fullPool_evictsColdestRecordFirst_memoryOnly() throws Exception {
        // 10 warm + 10 intake slots, records of 5 slots: the third allocation would eat into the intake, so the
        // coldest of the two resident records is evicted first (B3, B6).
        SeleneCache cache = node(10, 20);
        RecordSpec first = spec(30, null, true);
        RecordSpec second = spec(31, null, true);
        RecordSpec third = spec(32, null, true);
        await(cache.publish(first, snapshot(first)));
        await(cache.publish(second, snapshot(second)));
        // Use the first so that the second becomes the coldest.
        await(cache.restore(NS, new long[] {30}, List.of(target(true)), Duration.ofSeconds(1)));
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(third, snapshot(third))));
        assertEquals(1, await(cache.lookup(NS, new long[] {30})).depth(), "recently used record kept");
        assertEquals(0, await(cache.lookup(NS, new long[] {31})).depth(), "coldest record evicted");
        assertEquals(1, await(cache.lookup(NS, new long[] {32})).depth());
        assertEquals(1, cache.counters().get("evicted.memory"));
    }

    @Test
    void copyFailure_releasesSlots_isCounted_andTheTierKeepsServing() throws Exception {
        SeleneCache cache = node(64);
        RecordSpec bad = spec(40, null, true);
        copier.failNextCopies(1);
        PublishResult r = await(cache.publish(bad, snapshot(bad)));
        assertEquals("copy_failed", assertInstanceOf(PublishResult.Failed.class, r).reason());
        CacheStatus status = await(cache.status());
        assertEquals(status.totalSlots(), status.freeSlots(), "the failed record's slots are free again");
        RecordSpec good = spec(41, null, true);
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(good, snapshot(good))));
        assertEquals(1, cache.counters().get("publish.failed"));
        assertTrue(cache.traces().trace(bad.key()).orElseThrow().stream()
                .anyMatch(e -> e.message().contains("copy_failed")), "the failure is in the record's trace");
    }

    @Test
    void recordActorCrash_releasesItsSlots_isCounted_andTheTierKeepsServing() throws Exception {
        SeleneCache cache = node(64);
        RecordSpec doomed = spec(45, null, true);
        copier.crashNextCopies(1);
        PublishResult r = await(cache.publish(doomed, snapshot(doomed)));
        assertEquals("record_actor_failed", assertInstanceOf(PublishResult.Failed.class, r).reason());
        Awaitility.await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
                .until(() -> {
                    CacheStatus s = await(cache.status());
                    return s.freeSlots() == s.totalSlots();
                });
        assertEquals(1, cache.counters().get("record.failures"));
        RecordSpec next = spec(46, null, true);
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(next, snapshot(next))));
    }

    @Test
    void noSpace_whileSnapshotLives_waitsInLine_thenIsAbandonedByTheNodeWithReason() throws Exception {
        // 20 slots, 5-slot records: four stalled publications hold every slot; the fifth waits for slots while its
        // lease lasts, then the node gives it up and counts it.
        SeleneCache cache = node(10, 20);
        copier.close_gate();
        List<CompletableFuture<PublishResult>> stalled = new ArrayList<>();
        for (long k = 50; k < 54; k++) {
            RecordSpec s = spec(k, null, true);
            stalled.add(cache.publish(s, snapshot(s)).toCompletableFuture());
        }
        Awaitility.await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
                .until(() -> await(cache.status()).freeSlots() == 0);
        RecordSpec c = spec(54, null, true);
        Publisher publisher = new Publisher(cache);
        PublishOutcome outcome = await(publisher.publish(c, snapshot(c),
                SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(1))));
        assertTrue(outcome.abandoned(), outcome.toString());
        assertEquals("no_space", outcome.abandonReason());
        assertInstanceOf(PublishResult.Abandoned.class, outcome.result());
        assertEquals(1, outcome.attempts(), "the node held the publication; the caller did not retry");
        assertTrue(outcome.latencyNanos() >= TimeUnit.MILLISECONDS.toNanos(900), "waited while the lease lived");
        copier.open();
        for (CompletableFuture<PublishResult> f : stalled) {
            assertInstanceOf(PublishResult.Stored.class, f.get(10, TimeUnit.SECONDS));
        }
        Awaitility.await().atMost(Duration.ofSeconds(5))
                .until(() -> cache.counters().get("abandoned.no_space") == 1);
    }

    @Test
    void nothingConfigured_answersDisabled() throws Exception {
        CacheConfig off = CacheConfig.memoryOnly(LAYOUT, 0);
        try (SeleneCache cache = SeleneCache.start(off, copier)) {
            RecordSpec s = spec(60, null, true);
            assertInstanceOf(PublishResult.Disabled.class, await(cache.publish(s, new DevicePlacement(new long[0]))));
            assertEquals(RestoreResult.Outcome.DISABLED,
                    await(cache.restore(NS, new long[] {60}, List.of(), Duration.ofSeconds(1))).outcome());
            assertFalse(await(cache.status()).enabled());
        }
    }

    @Test
    void trace_recordsEachActorStepOfAPublication() throws Exception {
        SeleneCache cache = node(64);
        RecordSpec s = spec(70, null, true);
        await(cache.publish(s, snapshot(s)));
        List<TraceEvent> events = cache.traces().trace(s.key()).orElseThrow();
        List<String> actors = events.stream().map(TraceEvent::actor).toList();
        assertTrue(actors.containsAll(List.of("RecordActor", "Catalog")), actors.toString());
        assertTrue(events.stream().anyMatch(e -> e.actor().equals("Catalog") && e.message().startsWith("Allocated")),
                "the catalog traces the slots it grants: " + events);
    }

    @Test
    void publicationsOneAfterAnother_areCarriedByOneRecordActor_keptIdleBetweenThem() throws Exception {
        SeleneCache cache = node(64);
        List<RecordSpec> specs = new ArrayList<>();
        for (long k = 80; k < 100; k++) {
            RecordSpec s = spec(k, null, true);
            specs.add(s);
            assertInstanceOf(PublishResult.Stored.class, await(cache.publish(s, snapshot(s))));
        }
        assertEquals(1, recordActors(cache), "one record actor, idle between the publications");
        var paths = specs.stream().map(s -> cache.traces().trace(s.key()).orElseThrow().stream()
                .filter(e -> e.actor().equals("RecordActor")).findFirst().orElseThrow().path()).distinct().toList();
        assertEquals(1, paths.size(), "every record's trace names the same actor: " + paths);
    }

    @Test
    void manyPublicationsAtOnce_getARecordActorEach_andOnlyTheKeptNumberStaysIdleAfterwards() throws Exception {
        int publications = Publications.IDLE_RECORD_ACTORS_KEPT + 40;
        SeleneCache cache = node(publications * 5L + 100);
        copier.close_gate();
        List<CompletableFuture<PublishResult>> stalled = new ArrayList<>();
        for (long k = 0; k < publications; k++) {
            RecordSpec s = spec(1_000 + k, null, true);
            stalled.add(cache.publish(s, snapshot(s)).toCompletableFuture());
        }
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> recordActors(cache) == publications);
        copier.open();
        for (CompletableFuture<PublishResult> f : stalled) {
            assertInstanceOf(PublishResult.Stored.class, f.get(10, TimeUnit.SECONDS));
        }
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> recordActors(cache) == Publications.IDLE_RECORD_ACTORS_KEPT);
        RecordSpec next = spec(2_000, null, true);
        assertInstanceOf(PublishResult.Stored.class, await(cache.publish(next, snapshot(next))));
        assertEquals(Publications.IDLE_RECORD_ACTORS_KEPT, recordActors(cache), "the next one took an idle actor");
    }

    @Test
    void statusRequestsInFlightAtOnce_areEachAnswered() throws Exception {
        SeleneCache cache = node(64);
        List<CompletableFuture<CacheStatus>> asked = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            asked.add(cache.status().toCompletableFuture());
        }
        for (CompletableFuture<CacheStatus> f : asked) {
            assertTrue(f.get(10, TimeUnit.SECONDS).enabled());
        }
    }

    /** Messages handled so far by the node's actors of {@code kind}, from the actor census. */
    private static long handled(SeleneCache cache, String kind) {
        return ActorCensus.of(cache.system()).snapshot(0).kinds().stream()
                .filter(k -> k.kind().equals(kind)).mapToLong(ActorCensus.Kind::handled).sum();
    }

    /** The node's live record actors, from the actor census. */
    private static int recordActors(SeleneCache cache) {
        return ActorCensus.of(cache.system()).snapshot(0).kinds().stream()
                .filter(k -> k.kind().equals("RecordActor")).mapToInt(ActorCensus.Kind::actors).sum();
    }
}
