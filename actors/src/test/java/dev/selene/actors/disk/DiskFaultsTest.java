package dev.selene.actors.disk;

import dev.selene.actors.api.NodeInvariants;
import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.FailingKeysRecordIo;
import dev.selene.transport.disk.FaultInjectingRecordIo;
import dev.selene.transport.disk.NativeIo;
import dev.selene.transport.disk.RecordFileNames;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Disk faults injected through a fault-injecting record I/O (the real O_DIRECT writer over file system calls
 * that fail on command), and damaged files found at recovery (B9-B13, §10).
 */
class DiskFaultsTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "faults";

    private final SimulatedDevice copier = SimulatedDevice.create();
    private final List<SeleneCache> nodes = new ArrayList<>();
    private FaultInjectingRecordIo faulty;
    private Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        Path base = Path.of("target", "disk-fault-tests");
        Files.createDirectories(base);
        dir = Files.createTempDirectory(base, "node");
    }

    @AfterEach
    void stop() throws Exception {
        for (SeleneCache cache : nodes) {
            assertEquals("", NodeInvariants.violation(cache).toCompletableFuture().get(10, TimeUnit.SECONDS),
                    "the catalog's invariants hold after the test");
        }
        nodes.forEach(SeleneCache::close);
        copier.close();
    }

    private CacheConfig config(long warmSlots) {
        return config(warmSlots, 64L << 20);
    }

    private CacheConfig config(long warmSlots, long diskBytes) {
        return CacheConfig.memoryOnly(LAYOUT, warmSlots * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true))
                .withHostBudgetBytes((warmSlots + 10) * LAYOUT.slotBytes()).withDisk(dir.toString(), diskBytes);
    }

    /** A node whose disk tier writes through the fault-injecting record I/O. */
    private SeleneCache faultyNode(long warmSlots) {
        return faultyNode(warmSlots, 64L << 20);
    }

    private SeleneCache faultyNode(long warmSlots, long diskBytes) {
        SeleneCache cache = SeleneCache.start(config(warmSlots, diskBytes), copier, io -> {
            faulty = new FaultInjectingRecordIo(io, 2);
            return faulty;
        });
        nodes.add(cache);
        return cache;
    }

    private SeleneCache realNode(long warmSlots) {
        SeleneCache cache = SeleneCache.start(config(warmSlots), copier);
        nodes.add(cache);
        return cache;
    }

    private static RecordSpec spec(long hash, Long parent) {
        return new RecordSpec(new RecordKey(NS, hash), parent == null ? null : new RecordKey(NS, parent), true);
    }

    private DevicePlacement snapshot(RecordSpec s) {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true));
        DevicePlacement p = DevicePlacement.contiguous(LAYOUT, base, true);
        KeyedContent.fillRecord(copier, LAYOUT, p, s.key(), true);
        return p;
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    private PublishOutcome publish(SeleneCache cache, RecordSpec s) throws Exception {
        return await(new Publisher(cache).publish(s, snapshot(s),
                SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(10))));
    }

    private List<RecordSpec> chain(long first, int n) {
        List<RecordSpec> specs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            specs.add(spec(first + i, i == 0 ? null : first + i - 1));
        }
        return specs;
    }

    private boolean onDisk(RecordSpec s) {
        return Files.exists(RecordFileNames.recordFile(dir, s.key()));
    }

    private RestoreResult restore(SeleneCache cache, List<RecordSpec> specs) throws Exception {
        List<DevicePlacement> targets = new ArrayList<>();
        for (int i = 0; i < specs.size(); i++) {
            targets.add(DevicePlacement.contiguous(LAYOUT, copier.allocateDevice(
                    DevicePlacement.bytesNeeded(LAYOUT, true)), true));
        }
        long[] keys = specs.stream().mapToLong(s -> s.key().hash()).toArray();
        RestoreResult r = await(cache.restore(NS, keys, targets, Duration.ofHours(1)));
        for (int i = 0; i < r.records(); i++) {
            assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(i), specs.get(i).key(), true),
                    "restored record " + i + " is byte-identical");
        }
        return r;
    }

    @Test
    void eioOnAWrite_isRetriedOnce_andTheRecordCommits() throws Exception {
        SeleneCache cache = faultyNode(40);
        faulty.failWrite(NativeIo.EIO, 0);
        List<RecordSpec> specs = chain(10, 3);
        for (RecordSpec s : specs) {
            assertInstanceOf(PublishResult.Stored.class, publish(cache, s).result());
        }
        assertEquals(3, await(cache.drain(Duration.ofSeconds(20))).written());
        specs.forEach(s -> assertTrue(onDisk(s), s.key() + " committed after the retry"));
        assertEquals(1, cache.counters().get("disk.write.failures"));
    }

    @Test
    void parentFailingTwice_dropsItsParkedDescendants_andNoneBecomesVisibleOnDisk() throws Exception {
        FailingKeysRecordIo[] io = new FailingKeysRecordIo[1];
        SeleneCache cache = SeleneCache.start(config(40), copier, executor -> {
            io[0] = new FailingKeysRecordIo(dev.selene.actors.cache.HostCache.DEFAULT_RECORD_IO.apply(executor));
            return io[0];
        });
        nodes.add(cache);
        List<RecordSpec> specs = chain(20, 3);
        io[0].failWrites(specs.getFirst().key(), 2);
        for (RecordSpec s : specs) {
            publish(cache, s);
        }
        await(cache.drain(Duration.ofSeconds(20)));
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> cache.counters().get("spill.dropped") == 3);
        specs.forEach(s -> assertFalse(onDisk(s), s.key() + " never visible"));
        assertEquals(0, await(cache.lookup(NS, specs.stream().mapToLong(s -> s.key().hash()).toArray())).depth());
        try (var files = Files.list(dir)) {
            assertTrue(files.noneMatch(p -> p.toString().endsWith(".tmp")), "no temporary left behind");
        }
    }

    @Test
    void drain_anAncestorWhoseWriteIsRefusedTwice_skipsItsChain_countsItSkipped_andWritesTheOtherChains()
            throws Exception {
        FailingKeysRecordIo[] io = new FailingKeysRecordIo[1];
        SeleneCache cache = SeleneCache.start(config(40), copier, executor -> {
            io[0] = new FailingKeysRecordIo(dev.selene.actors.cache.HostCache.DEFAULT_RECORD_IO.apply(executor));
            return io[0];
        });
        nodes.add(cache);
        List<RecordSpec> refused = chain(40, 3);
        List<RecordSpec> fine = chain(50, 2);
        io[0].failWrites(refused.getFirst().key(), 2);
        for (RecordSpec s : refused) {
            publish(cache, s);
        }
        for (RecordSpec s : fine) {
            publish(cache, s);
        }
        var report = await(cache.drain(Duration.ofSeconds(20)));
        assertEquals(new dev.selene.actors.value.DrainReport(2, 3, false), report,
                "the other chain is written; the refused root and the two records under it are skipped");
        refused.forEach(s -> assertFalse(onDisk(s), s.key() + " never visible"));
        fine.forEach(s -> assertTrue(onDisk(s), s.key() + " written"));
        assertEquals(2, restore(cache, fine).records());
    }

    @Test
    void aFullDisk_lowersTheTierSize_evictsTheColdestFile_andTheRecordIsWrittenOnceThereIsRoom() throws Exception {
        // Intake only (10 slots, two records): publishing the third drops the coldest clean record from memory.
        SeleneCache cache = faultyNode(0);
        RecordSpec cold = spec(29, null);
        RecordSpec warm = spec(30, null);
        // Each is spilled at once (the intake is under pressure), before or by the drain: wait for its file.
        publish(cache, cold);
        await(cache.drain(Duration.ofSeconds(20)));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> onDisk(cold));
        publish(cache, warm);
        await(cache.drain(Duration.ofSeconds(20)));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> onDisk(warm));
        RecordSpec next = spec(31, null);
        // Armed before the publication: the spill of the next record may start preallocating at once.
        faulty.failPreallocation(NativeIo.ENOSPC); // the disk fills up long before the tier's 64 MiB
        assertInstanceOf(PublishResult.Stored.class, publish(cache, next).result());

        assertEquals(0, await(cache.drain(Duration.ofSeconds(20))).skipped(), "nothing given up");

        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> onDisk(next));
        assertEquals(1, cache.counters().get("disk.full"));
        assertEquals(0, cache.counters().get("spill.given_up"), "a full disk does not drop the record");
        assertFalse(onDisk(cold), "the coldest file made room");
        assertTrue(onDisk(warm));
        assertEquals(2 * RecordFileFormat.fileLength(LAYOUT, true), await(cache.status()).disk().capacityBytes(),
                "the tier's size is what the disk held");
        assertEquals(RestoreResult.Outcome.RESTORED, restore(cache, List.of(next)).outcome());
    }

    @Test
    void aFileARestoreIsReading_staysWhileSpillsNeedRoom_andIsServed_stalledReadInjected() throws Exception {
        // Intake only (10 slots, two records) and a disk of three record files.
        SeleneCache cache = faultyNode(0, 3 * RecordFileFormat.fileLength(LAYOUT, true));
        RecordSpec a = spec(50, null);
        for (RecordSpec s : List.of(a, spec(51, null), spec(52, null))) {
            publish(cache, s);
            await(cache.drain(Duration.ofSeconds(20)));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> onDisk(s));
        }
        // The first, the coldest, left memory for the third: a restore reads its file, and that read stalls.
        FaultInjectingRecordIo.Stall stall = faulty.stallNextRead(Duration.ofSeconds(30));
        CompletableFuture<RestoreResult> restoring = CompletableFuture.supplyAsync(() -> {
            try {
                return restore(cache, List.of(a));
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        });
        try {
            assertTrue(stall.awaitStarted(Duration.ofSeconds(10)), "the restore reads the first record's file");
            assertEquals(1, await(cache.status()).disk().filesBeingRead(), "the file being read, shown");
            RecordSpec next = spec(53, null);
            assertInstanceOf(PublishResult.Stored.class, publish(cache, next).result());
            assertEquals(0, await(cache.drain(Duration.ofSeconds(20))).skipped());
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> onDisk(next));
            assertTrue(onDisk(a), "the file being read stayed; a colder one made room");
        } finally {
            stall.release();
        }
        RestoreResult r = restoring.get(30, TimeUnit.SECONDS);
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome(), r.detail());
        assertEquals(1, r.fromDisk());
        Awaitility.await().atMost(Duration.ofSeconds(5))
                .until(() -> await(cache.status()).disk().filesBeingRead() == 0);
    }

    @Test
    void aWriteStalled_doesNotFreezePublicationOrOtherWrites_andIsWarnedOfOnceItPassesThirtySeconds()
            throws Exception {
        ch.qos.logback.classic.Logger log = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                "dev.selene.actors.cache.DiskStore");
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> warnings =
                new ch.qos.logback.core.read.ListAppender<>();
        warnings.setContext(log.getLoggerContext());
        warnings.start();
        log.addAppender(warnings);
        // Intake-only pool of 10 slots: publishing 8 records of 5 slots needs spills to keep flowing.
        SeleneCache cache = faultyNode(0);
        FaultInjectingRecordIo.Stall stall = faulty.stallNextWrite(Duration.ofSeconds(60));
        try {
            List<RecordSpec> roots = new ArrayList<>();
            for (long k = 40; k < 48; k++) {
                RecordSpec s = spec(k, null);
                roots.add(s);
                assertInstanceOf(PublishResult.Stored.class, publish(cache, s).result(), "publication " + k);
            }
            assertTrue(stall.awaitStarted(Duration.ofSeconds(5)), "one write is stalled");
            assertTrue(roots.stream().filter(this::onDisk).count() >= 5, "other records kept being written");
            // an operator hears of a write that does not return (a frozen or failing disk), once
            Awaitility.await().atMost(Duration.ofSeconds(50)).until(() -> stalledWarnings(warnings) == 1);
        } finally {
            stall.release();
            log.detachAppender(warnings);
        }
    }

    private static long stalledWarnings(
            ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> appender) {
        synchronized (appender) {
            return appender.list.stream().filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN
                    && e.getFormattedMessage().contains("the disk may be stalled")).count();
        }
    }

    @Test
    void crashBetweenWriteAndRename_nothingHalfWrittenIsVisible_theRetryCommitsByteIdentically() throws Exception {
        SeleneCache cache = faultyNode(40);
        RecordSpec s = spec(50, null);
        publish(cache, s);
        faulty.crashBeforeRename();
        await(cache.drain(Duration.ofSeconds(20)));
        assertEquals(1, cache.counters().get("disk.write.failures"), "the crashed write failed");
        assertTrue(onDisk(s), "the retry committed it");
        cache.close();
        nodes.remove(cache);
        SeleneCache restarted = realNode(40);
        assertEquals(1, restore(restarted, List.of(s)).records(), "served from the committed file only");
    }

    @Test
    void leftoverTemporary_isDeletedAtRecovery_andNeverServed() throws Exception {
        SeleneCache first = realNode(40);
        RecordSpec committed = spec(55, null);
        publish(first, committed);
        await(first.drain(Duration.ofSeconds(20)));
        first.close();
        nodes.remove(first);
        // A complete-looking file that never got renamed into place: what a crash before the rename leaves.
        RecordSpec uncommitted = spec(56, null);
        Path temp = RecordFileNames.temporaryFile(RecordFileNames.recordFile(dir, uncommitted.key()));
        Files.copy(RecordFileNames.recordFile(dir, committed.key()), temp);
        SeleneCache restarted = realNode(40);
        assertFalse(Files.exists(temp), "recovery deleted the temporary");
        assertEquals(RestoreResult.Outcome.MISS, restore(restarted, List.of(uncommitted)).outcome());
        assertEquals(1, restore(restarted, List.of(committed)).records());
    }

    @Test
    void flippedBitAndTruncatedFile_foundAtRecovery_areQuarantined_neverRestored() throws Exception {
        SeleneCache first = realNode(40);
        List<RecordSpec> a = chain(60, 2);
        List<RecordSpec> b = chain(70, 2);
        for (RecordSpec s : a) {
            publish(first, s);
        }
        for (RecordSpec s : b) {
            publish(first, s);
        }
        assertEquals(4, await(first.drain(Duration.ofSeconds(20))).written());
        first.close();
        nodes.remove(first);
        // A flipped bit in the header of a's leaf, and b's leaf cut short.
        Path flipped = RecordFileNames.recordFile(dir, a.get(1).key());
        byte[] bytes = Files.readAllBytes(flipped);
        bytes[100] ^= 0x10;
        Files.write(flipped, bytes);
        try (FileChannel ch = FileChannel.open(RecordFileNames.recordFile(dir, b.get(1).key()),
                StandardOpenOption.WRITE)) {
            ch.truncate(4096 * 2);
        }
        SeleneCache second = realNode(40);
        assertEquals(2, second.counters().get("disk.quarantined"));
        assertTrue(Files.isDirectory(dir.resolve(RecordFileNames.QUARANTINE_DIRECTORY)));
        RestoreResult ra = restore(second, a);
        RestoreResult rb = restore(second, b);
        assertEquals(1, ra.records(), "only the intact root of a is restored");
        assertEquals(1, rb.records(), "only the intact root of b is restored");
    }

    @Test
    void flippedBitInABody_isCaughtOnRead_andTheRecordIsNotServed() throws Exception {
        SeleneCache first = realNode(40);
        List<RecordSpec> a = chain(80, 2);
        for (RecordSpec s : a) {
            publish(first, s);
        }
        await(first.drain(Duration.ofSeconds(20)));
        first.close();
        nodes.remove(first);
        Path leaf = RecordFileNames.recordFile(dir, a.get(1).key());
        byte[] bytes = Files.readAllBytes(leaf);
        bytes[4096 + 17] ^= 0x01; // first page of the body
        Files.write(leaf, bytes);
        // the same record quarantined once before: that evidence must stay beside the new one
        Path earlier = Files.createDirectories(dir.resolve(RecordFileNames.QUARANTINE_DIRECTORY))
                .resolve(leaf.getFileName());
        Files.writeString(earlier, "quarantined before");
        SeleneCache second = realNode(40);
        RestoreResult r = restore(second, a);
        assertEquals(1, r.records(), "the corrupt leaf is not restored; its intact parent is");
        assertEquals(1, second.counters().get("disk.read.failures"));
        assertEquals("quarantined before", Files.readString(earlier), "the earlier quarantined file is kept");
        assertArrayEquals(bytes, Files.readAllBytes(earlier.resolveSibling(leaf.getFileName() + ".1")),
                "the file that failed on read is kept beside it");
    }
}
