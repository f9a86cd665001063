package dev.selene.actors.disk;

import dev.selene.actors.api.NodeInvariants;
import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.cache.HostCache;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.ExpiryReport;
import dev.selene.actors.value.LookupResult;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RecordDescription;
import dev.selene.actors.value.RecordPage;
import dev.selene.actors.value.RecordView;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.Tier;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.CommitOrderRecorder;
import dev.selene.transport.disk.RecordFileNames;
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
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A node with a disk tier on the real disk (O_DIRECT record files): spill, restore, drain, restart, recovery. */
class DiskNodeTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "disk";

    private final SimulatedDevice copier = SimulatedDevice.create();
    private final List<SeleneCache> nodes = new ArrayList<>();
    private Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        Path base = Path.of("target", "disk-node-tests");
        Files.createDirectories(base);
        dir = Files.createTempDirectory(base, "node");
    }

    @AfterEach
    void stop() throws Exception {
        for (SeleneCache cache : nodes) {
            assertEquals("", await(NodeInvariants.violation(cache)), "the catalog's invariants hold after the test");
        }
        nodes.forEach(SeleneCache::close);
        copier.close();
    }

    /** A node of {@code warmSlots} warm slots over the test's directory; intake fixed at two windows. */
    private SeleneCache node(long warmSlots, boolean drain) {
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, warmSlots * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true))
                .withHostBudgetBytes((warmSlots + 10) * LAYOUT.slotBytes())
                .withDisk(dir.toString(), 64L << 20).withDrainOnShutdown(drain);
        SeleneCache cache = SeleneCache.start(config, copier);
        nodes.add(cache);
        return cache;
    }

    @Test
    void aDiskSizeBeyondWhatTheFilesystemHolds_isShrunkToItsFreeSpace_andTheNodeServes() throws Exception {
        long petabyte = 1L << 50;
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 8 * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true)).withHostBudgetBytes(18 * LAYOUT.slotBytes())
                .withDisk(dir.toString(), petabyte);
        // Other processes write to the same filesystem meanwhile: the free space the node saw lies between these.
        long freeBefore = Files.getFileStore(dir).getUsableSpace();
        SeleneCache cache = SeleneCache.start(config, copier);
        nodes.add(cache);
        long capacity = await(cache.status()).disk().capacityBytes();
        long freeAfter = Files.getFileStore(dir).getUsableSpace();
        long high = Math.max(freeBefore, freeAfter);
        long low = Math.min(freeBefore, freeAfter);
        assertTrue(capacity < petabyte && capacity <= high && capacity > low / 2,
                "capacity " + capacity + " follows the free space, " + freeBefore + " then " + freeAfter);
        List<RecordSpec> specs = publishChain(cache, 1, 3);
        // Under intake pressure a record may spill before the drain starts: what counts is that all three are on
        // the shrunk disk once it has run.
        assertEquals(0, await(cache.drain(Duration.ofSeconds(20))).skipped());
        assertEquals(3, await(cache.status()).disk().records(), "every record written to the shrunk disk");
        assertRestoresEverything(cache, specs);
    }

    private static RecordSpec spec(long hash, Long parent, boolean hasRow) {
        return new RecordSpec(new RecordKey(NS, hash), parent == null ? null : new RecordKey(NS, parent), hasRow);
    }

    private DevicePlacement snapshot(RecordSpec s) {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, s.hasRow()));
        DevicePlacement p = DevicePlacement.contiguous(LAYOUT, base, s.hasRow());
        KeyedContent.fillRecord(copier, LAYOUT, p, s.key(), s.hasRow());
        return p;
    }

    private DevicePlacement target(boolean hasRow) {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, hasRow));
        return DevicePlacement.contiguous(LAYOUT, base, hasRow);
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    /** Publishes a chain of {@code n} records (row on every record) with the retrying publisher. */
    private List<RecordSpec> publishChain(SeleneCache cache, long first, int n) throws Exception {
        Publisher publisher = new Publisher(cache);
        List<RecordSpec> specs = new ArrayList<>();
        Long parent = null;
        for (int i = 0; i < n; i++) {
            RecordSpec s = spec(first + i, parent, true);
            PublishOutcome o = await(publisher.publish(s, snapshot(s),
                    SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(10))));
            assertInstanceOf(PublishResult.Stored.class, o.result(), "publication " + i + ": " + o);
            specs.add(s);
            parent = first + i;
        }
        return specs;
    }

    private static long[] chain(List<RecordSpec> specs) {
        return specs.stream().mapToLong(s -> s.key().hash()).toArray();
    }

    private void assertRestoresEverything(SeleneCache cache, List<RecordSpec> specs) throws Exception {
        List<DevicePlacement> targets = specs.stream().map(s -> target(s.hasRow())).toList();
        RestoreResult r = await(cache.restore(NS, chain(specs), targets, Duration.ofHours(1)));
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome(), r.detail());
        assertEquals(specs.size(), r.records());
        for (int i = 0; i < specs.size(); i++) {
            assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(i), specs.get(i).key(), true),
                    "record " + i + " byte-identical");
        }
    }

    @Test
    void diskOnly_publishesMoreThanMemoryHolds_spillsUnderPressure_restoresFromDiskByteIdentically()
            throws Exception {
        SeleneCache cache = node(0, false);
        List<RecordSpec> specs = publishChain(cache, 100, 12); // 60 slots through a 10-slot pool
        LookupResult found = await(cache.lookup(NS, chain(specs)));
        assertEquals(12, found.depth());
        assertTrue(found.records().stream().anyMatch(l -> l.tier() == Tier.DISK), found.toString());
        assertRestoresEverything(cache, specs);
        assertTrue(cache.counters().get("spill.written") >= 10, cache.counters().snapshot().toString());
    }

    @Test
    void memoryAndDisk_restart_withoutDrain_restoresEveryCommittedRecord_withDrain_everyRecord() throws Exception {
        SeleneCache first = node(40, false);
        List<RecordSpec> specs = publishChain(first, 200, 3); // 15 of 50 slots: no pressure, nothing spilled
        assertEquals(0, first.counters().get("spill.written"));
        first.close();
        nodes.remove(first);
        SeleneCache second = node(40, true);
        assertEquals(0, await(second.lookup(NS, chain(specs))).depth(), "memory-only records die with the node");
        List<RecordSpec> again = publishChain(second, 300, 3);
        second.close(); // drains
        nodes.remove(second);
        SeleneCache third = node(40, false);
        assertRestoresEverything(third, again);
    }

    @Test
    void drain_writesParentsBeforeChildren_andReportsWhatItWrote() throws Exception {
        SeleneCache cache = node(40, false);
        List<RecordSpec> specs = publishChain(cache, 400, 5);
        DrainReport report = await(cache.drain(Duration.ofSeconds(20)));
        assertEquals(5, report.written());
        assertEquals(0, report.skipped());
        for (RecordSpec s : specs) {
            assertTrue(Files.exists(RecordFileNames.recordFile(dir, s.key())), s.key() + " written");
        }
    }

    @Test
    void aDrainAskedWhileOneRuns_waitsForIt_andGetsItsReport_neverAnEarlyDrained() throws Exception {
        SeleneCache cache = node(40, false);
        List<RecordSpec> specs = publishChain(cache, 410, 5);
        var first = cache.drain(Duration.ofSeconds(20)).toCompletableFuture();
        var second = cache.drain(Duration.ofSeconds(20)).toCompletableFuture(); // while the chain is being written
        DrainReport joined = await(second);
        for (RecordSpec s : specs) {
            assertTrue(Files.exists(RecordFileNames.recordFile(dir, s.key())), s.key() + " written when it answers");
        }
        assertEquals(await(first), joined, "the running drain's report");
        assertEquals(5, joined.written());
    }

    @Test
    void aDiskDirectoryThatIsAFile_isASettingError_namingTheSetting() throws Exception {
        Path file = Files.createFile(dir.resolve("not-a-directory"));
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 0).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true)).withHostBudgetBytes(10L * LAYOUT.slotBytes())
                .withDisk(file.toString(), 64L << 20);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> nodes.add(SeleneCache.start(config, copier)));
        assertTrue(e.getMessage().startsWith("selene.disk.dir"), e.getMessage());
    }

    @Test
    void secondNode_onTheSameDirectory_failsAtStartWithOneClearLine() {
        node(0, false);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> node(0, false));
        assertTrue(e.getMessage().contains(dir.getFileName().toString()), e.getMessage());
        assertTrue(!e.getMessage().contains("\n"), "one line: " + e.getMessage());
    }

    @Test
    void restoreFromDisk_estimatedSlowerThanRecompute_isRefused_andSaysWhy() throws Exception {
        SeleneCache first = node(40, true);
        List<RecordSpec> specs = publishChain(first, 500, 4);
        first.close(); // drains: everything is on disk, nothing in memory after the restart
        nodes.remove(first);
        SeleneCache cache = node(40, false);
        List<DevicePlacement> targets = specs.stream().map(s -> target(true)).toList();
        RestoreResult refused = await(cache.restore(NS, chain(specs), targets, Duration.ofNanos(1_000)));
        assertEquals(RestoreResult.Outcome.REFUSED, refused.outcome());
        assertTrue(refused.detail().contains("recompute"), refused.detail());
        RestoreResult restored = await(cache.restore(NS, chain(specs), targets, Duration.ofSeconds(10)));
        assertEquals(RestoreResult.Outcome.RESTORED, restored.outcome());
        assertEquals(4, restored.fromDisk());
    }

    @Test
    void maxAge_afterARestart_expiresStaleChainsFromTheirTip_andAnOldRootKeepsItsFreshSubtree() throws Exception {
        SeleneCache first = node(40, true);
        List<RecordSpec> old = publishChain(first, 600, 3);
        List<RecordSpec> fresh = publishChain(first, 700, 2);
        List<RecordSpec> oldRoot = publishChain(first, 800, 2);
        first.close(); // drains all seven
        nodes.remove(first);
        FileTime twoHoursAgo = FileTime.from(
                Instant.now().minus(Duration.ofHours(2)));
        for (RecordSpec s : old) {
            Files.setLastModifiedTime(RecordFileNames.recordFile(dir, s.key()), twoHoursAgo);
        }
        Files.setLastModifiedTime(RecordFileNames.recordFile(dir, oldRoot.getFirst().key()), twoHoursAgo);
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 40 * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true)).withHostBudgetBytes(50 * LAYOUT.slotBytes())
                .withDisk(dir.toString(), 64L << 20).withMaxAge(Duration.ofHours(1));
        SeleneCache cache = SeleneCache.start(config, copier);
        nodes.add(cache);
        ExpiryReport report = await(cache.expireNow());
        assertTrue(report.enabled());
        assertEquals(old.reversed().stream().map(RecordSpec::key).toList(), report.removed(),
                "the stale chain, from its tip");
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> cache.counters().get("expired.disk") == 3);
        for (RecordSpec s : old) {
            assertTrue(!Files.exists(RecordFileNames.recordFile(dir, s.key())), s.key() + " expired");
        }
        assertRestoresEverything(cache, fresh);
        assertRestoresEverything(cache, oldRoot); // its child is fresh: the old root stays with it
    }

    @Test
    void drain_skipsARecordWhoseAncestorCanNeverBeWritten_insteadOfRetryingForever() throws Exception {
        SeleneCache cache = node(40, false);
        RecordSpec orphan = spec(801, 800L, true); // its parent 800 was never published
        Publisher publisher = new Publisher(cache);
        assertInstanceOf(PublishResult.Stored.class, await(publisher.publish(orphan, snapshot(orphan),
                SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(10)))).result());
        List<RecordSpec> fine = publishChain(cache, 900, 2);
        DrainReport report = await(cache.drain(Duration.ofSeconds(20)));
        assertEquals(2, report.written());
        assertEquals(1, report.skipped());
        assertTrue(!report.timedOut(), "ends on its own, not by the timeout");
        assertTrue(!Files.exists(RecordFileNames.recordFile(dir, orphan.key())), "never visible without its parent");
        fine.forEach(s -> assertTrue(Files.exists(RecordFileNames.recordFile(dir, s.key()))));
    }

    @Test
    void drain_anAncestorWithNoRoomOnTheDisk_isSkipped_andTheRestOfThePlanIsStillWritten() throws Exception {
        long rowFile = RecordFileFormat.fileLength(LAYOUT, true);
        long bareFile = RecordFileFormat.fileLength(LAYOUT, false);
        // Room for two files with a row and one without: once the first chain's two files are on it (their records
        // stay in memory, so their files cannot be deleted for room), only a record without a row fits.
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 40 * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true)).withHostBudgetBytes(50 * LAYOUT.slotBytes())
                .withDisk(dir.toString(), 2 * rowFile + bareFile);
        SeleneCache cache = SeleneCache.start(config, copier);
        nodes.add(cache);
        List<RecordSpec> resident = publishChain(cache, 1500, 2);
        assertEquals(new DrainReport(2, 0, false), await(cache.drain(Duration.ofSeconds(20))));

        Publisher publisher = new Publisher(cache);
        RecordSpec noRoom = spec(1600, null, true); // the coldest dirty record: planned first, and it cannot fit
        RecordSpec underIt = spec(1601, 1600L, false);
        RecordSpec fits = spec(1700, null, false);
        for (RecordSpec s : List.of(noRoom, underIt, fits)) {
            assertInstanceOf(PublishResult.Stored.class, await(publisher.publish(s, snapshot(s),
                    SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(10)))).result());
        }
        DrainReport report = await(cache.drain(Duration.ofSeconds(20)));
        assertEquals(new DrainReport(1, 2, false), report, "the record that fits is written; the chain whose root "
                + "finds no room is skipped, and the drain ends on its own");
        assertTrue(Files.exists(RecordFileNames.recordFile(dir, fits.key())), "written though planned after it");
        assertTrue(!Files.exists(RecordFileNames.recordFile(dir, noRoom.key())));
        assertTrue(!Files.exists(RecordFileNames.recordFile(dir, underIt.key())), "never visible without its parent");
        resident.forEach(s -> assertTrue(Files.exists(RecordFileNames.recordFile(dir, s.key())), s.key() + " kept"));
    }

    @Test
    void aRecordRestoredFromDisk_staysInMemoryAsClean_soTheNextRestoreComesFromMemory() throws Exception {
        SeleneCache first = node(40, true);
        List<RecordSpec> specs = publishChain(first, 1000, 3);
        first.close(); // drains
        nodes.remove(first);
        SeleneCache cache = node(40, false);
        List<DevicePlacement> targets = specs.stream().map(s -> target(true)).toList();
        RestoreResult fromDisk = await(cache.restore(NS, chain(specs), targets, Duration.ofSeconds(10)));
        assertEquals(3, fromDisk.fromDisk());
        RestoreResult again = await(cache.restore(NS, chain(specs), targets, Duration.ofSeconds(10)));
        assertEquals(3, again.fromMemory(), "promoted into the warm tier");
        assertEquals(3, cache.counters().get("restore.promoted"));
        for (int i = 0; i < specs.size(); i++) {
            assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(i), specs.get(i).key(), true));
        }
    }

    @Test
    void aChildsFileNeverCommitsBeforeItsParents() throws Exception {
        List<RecordKey> commitOrder = Collections.synchronizedList(new ArrayList<>());
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 0).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true)).withHostBudgetBytes(10L * LAYOUT.slotBytes())
                .withDisk(dir.toString(), 64L << 20);
        SeleneCache cache = SeleneCache.start(config, copier, executor -> new CommitOrderRecorder(
                HostCache.DEFAULT_RECORD_IO.apply(executor), commitOrder));
        nodes.add(cache);
        List<List<RecordSpec>> chains = new ArrayList<>();
        List<CompletableFuture<List<RecordSpec>>> running = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            long first = 2000 + 100L * c;
            running.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return publishChain(cache, first, 6);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }));
        }
        for (var f : running) {
            chains.add(f.get(60, TimeUnit.SECONDS));
        }
        await(cache.drain(Duration.ofSeconds(20)));
        for (List<RecordSpec> chain : chains) {
            for (RecordSpec s : chain) {
                if (s.parent() != null) {
                    int child = commitOrder.indexOf(s.key());
                    int parent = commitOrder.indexOf(s.parent());
                    assertTrue(child > parent && parent >= 0, s.key() + " committed at " + child + ", its parent at "
                            + parent);
                }
            }
        }
    }

    @Test
    void aRestartWithoutDrain_findsEveryCommittedRecord_andRestoresThemByteIdentically() throws Exception {
        SeleneCache first = node(10, false);
        List<List<RecordSpec>> chains = new ArrayList<>();
        for (int c = 0; c < 12; c++) {
            chains.add(publishChain(first, 3000 + 100L * c, 4));
        }
        RecordPage before = await(first.records(NS, Tier.DISK, 0, 10_000));
        assertTrue(before.total() >= 30, "most records spilled: " + before.total());
        first.close(); // no drain: what is only in memory is lost
        nodes.remove(first);
        SeleneCache second = node(10, false);
        RecordPage after = await(second.records(NS, Tier.DISK, 0, 10_000));
        // Writes still in flight at the stop finish before the store lets go of the slots, so more may be found.
        assertTrue(after.records().stream().map(RecordView::key).toList().containsAll(
                before.records().stream().map(RecordView::key).toList()), "every committed record is found again");
        Set<RecordKey> onDisk = new HashSet<>(after.records().stream().map(RecordView::key)
                .toList());
        int restoredChains = 0;
        for (List<RecordSpec> chain : chains) {
            if (chain.stream().allMatch(s -> onDisk.contains(s.key()))) {
                assertRestoresEverything(second, chain);
                restoredChains++;
            }
        }
        assertTrue(restoredChains >= 6, "whole chains on disk restored: " + restoredChains);
        RecordDescription d = await(second.describe(after.records().getFirst().key()));
        assertEquals("on_disk", d.state());
        assertEquals("durable_only", d.record().state());
    }

    @Test
    void republishingARecordWhoseFileIsOnDisk_makesItClean_andDoesNotWedgeTheIntake() throws Exception {
        SeleneCache cache = node(0, false); // a 10-slot pool of intake only: two parked records fill it
        List<RecordSpec> specs = publishChain(cache, 1100, 12);
        Publisher publisher = new Publisher(cache);
        for (RecordSpec s : specs.subList(0, 2)) { // long since dropped from memory, still on disk
            PublishOutcome o = await(publisher.publish(s, snapshot(s),
                    SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(10))));
            assertTrue(o.result() instanceof PublishResult.Stored || o.result() instanceof PublishResult.Present,
                    o.toString());
        }
        publishChain(cache, 1200, 4); // needs the whole pool again: only possible if the two became clean
    }

    @Test
    void dirtyRecordsHangingFromAMissingParent_areDroppedAsOrphans_andDoNotWedgeTheIntake() throws Exception {
        SeleneCache cache = node(0, false);
        Publisher publisher = new Publisher(cache);
        for (long k = 1301; k <= 1302; k++) { // parents 1300 and 1299 are never published
            RecordSpec orphan = spec(k, k - 2, true);
            assertInstanceOf(PublishResult.Stored.class, await(publisher.publish(orphan, snapshot(orphan),
                    SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(10)))).result());
        }
        RecordSpec next = spec(1400, null, true);
        PublishOutcome o = await(publisher.publish(next, snapshot(next),
                SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(15))));
        assertInstanceOf(PublishResult.Stored.class, o.result(), o.toString());
        assertTrue(cache.counters().get("spill.orphans") >= 1, cache.counters().snapshot().toString());
    }
}
