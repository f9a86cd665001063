package dev.selene.actors.cache;

import com.typesafe.config.ConfigFactory;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.trace.TraceSource;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.Tier;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.ActorPaths;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * One restore task against real host slots and a simulated device, with a probe standing in for the catalog (its
 * staging answered from a real {@link SlotLedger}) and for the disk store, on manual time: staged waves, the staging
 * patience, what it reports back.
 */
class RestoreTaskTest {

    private static final Layout LAYOUT = Layout.small();
    private static final int TOTAL_SLOTS = 64;

    private final ActorTestKit kit = ActorTestKit.create(ManualTime.config()
            .withFallback(ConfigFactory.load("application-test")));
    private final ManualTime manualTime = ManualTime.get(kit.system());
    private final SimulatedDevice device = SimulatedDevice.create();
    private final HostMemory host = HostMemory.allocate(LAYOUT, TOTAL_SLOTS);
    private final CacheCounters counters = new CacheCounters();
    private final CacheMetrics metrics = CacheMetrics.forNode("restore_task_test", counters);
    private final List<Long> deviceAllocations = new ArrayList<>();
    private final TestProbe<Catalog.Command> catalog = kit.createTestProbe();
    private final TestProbe<Store.Command> disk = kit.createTestProbe();
    private final TestProbe<RestoreResult> caller = kit.createTestProbe();
    private final TraceBook traces = new TraceBook(64);
    /** The catalog's slots; its staging requests are answered from them, the rest goes to the catalog probe. */
    private final SlotLedger slots = new SlotLedger(TOTAL_SLOTS, 16, () -> 0, wanted -> List.of(), traces,
            new TraceSource("Catalog", ActorPaths.fromString("pekko://test/user/catalog")), FaultInjection.NONE);
    private ActorRef<Catalog.Command> catalogRef;
    private RecordContext records;

    @AfterEach
    void stop() {
        synchronized (slots) {
            assertEquals("", slots.invariantViolation(), "the slots' accounting holds");
        }
        kit.shutdownTestKit();
        deviceAllocations.forEach(device::freeDevice);
        device.close();
        host.close();
        metrics.close();
    }

    /** The node's clock, set by the tests that time a wave. */
    private final AtomicLong clock = new AtomicLong(1_000);

    private void start() {
        device.register(host);
        records = new RecordContext(LAYOUT, host, device, metrics, traces, FaultInjection.NONE,
                RecordContext.DEFAULT_WRITE_CHECK, clock::get, new DeviceTransfers());
        catalogRef = kit.spawn(Behaviors.receive(Catalog.Command.class)
                .onMessage(Catalog.Command.class, m -> {
                    synchronized (slots) {
                        stagingOrForward(m);
                    }
                    return Behaviors.same();
                }).build());
    }

    /** Answers staging as the catalog does, from the ledger; every other message goes to the catalog probe. */
    private void stagingOrForward(Catalog.Command m) {
        switch (m) {
            case Catalog.Stage s -> {
                SlotLedger.Answer a = slots.request(new SlotLedger.Allocation(s.key(), s.slots(), Purpose.STAGING,
                        s.waits(), s.request(), 0, granted -> s.replyTo().tell(new Catalog.Staged(granted)),
                        () -> s.replyTo().tell(new Catalog.NotStaged("cancelled"))));
                if (a == SlotLedger.Answer.SHORT || a == SlotLedger.Answer.OVERSIZE) {
                    s.replyTo().tell(new Catalog.NotStaged(a.name()));
                }
            }
            case Catalog.CancelStaging c -> slots.cancel(c.key(), Purpose.STAGING, c.request());
            case Catalog.ReleaseStaging r -> slots.release(r.slots());
            default -> catalog.ref().tell(m);
        }
    }

    private static RecordSpec spec(long k, Long parent) {
        return new RecordSpec(new RecordKey("rt", k), parent == null ? null : new RecordKey("rt", parent), true);
    }

    private List<DevicePlacement> targets(int n) {
        List<DevicePlacement> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long base = device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true));
            deviceAllocations.add(base);
            out.add(DevicePlacement.contiguous(LAYOUT, base, true));
        }
        return out;
    }

    private int freeSlots() {
        synchronized (slots) {
            return slots.stats().free();
        }
    }

    /** Answers the next {@code n} reads the disk probe gets as done (8 KiB each); their keys in order. */
    private List<RecordKey> readAll(int n) {
        List<RecordKey> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Store.Read read = (Store.Read) disk.receiveMessage();
            keys.add(read.key());
            read.replyTo().tell(new Store.ReadDone(read.key(), 8192));
        }
        return keys;
    }

    @Test
    void diskRecords_areStagedReadAndCopied_thenHandedToTheCatalog_andTheUseIsReported() {
        start();
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.stored(spec(1, null), disk.ref(), Tier.DISK, true),
                RestoreTask.Part.stored(spec(2, 1L), disk.ref(), Tier.DISK, true));
        kit.spawn(RestoreTask.create(records, catalogRef, parts, targets(2), caller.ref(), 1));
        readAll(2);
        assertInstanceOf(Catalog.ReadSample.class, catalog.receiveMessage());
        assertInstanceOf(Catalog.AdoptRestored.class, catalog.receiveMessage());
        assertInstanceOf(Catalog.AdoptRestored.class, catalog.receiveMessage());
        Catalog.RestoreEnded released = (Catalog.RestoreEnded) catalog.receiveMessage();
        assertEquals(spec(2, 1L).key(), released.used().deepest());
        RestoreResult r = caller.receiveMessage();
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome());
        assertEquals(2, r.fromDisk());
    }

    @Test
    void ownFilesPinnedForTheRead_areUnpinnedOnce_afterTheirWaveIsCopiedAndAdopted() {
        start();
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.ownFile(spec(1, null), disk.ref(), Tier.DISK),
                RestoreTask.Part.ownFile(spec(2, 1L), disk.ref(), Tier.DISK));
        kit.spawn(RestoreTask.create(records, catalogRef, parts, targets(2), caller.ref(), 1));
        readAll(2);
        assertInstanceOf(Catalog.ReadSample.class, catalog.receiveMessage());
        assertInstanceOf(Catalog.AdoptRestored.class, catalog.receiveMessage());
        assertInstanceOf(Catalog.AdoptRestored.class, catalog.receiveMessage());
        assertEquals(new Catalog.UnpinFiles(List.of(spec(1, null).key(), spec(2, 1L).key())),
                catalog.receiveMessage());
        assertInstanceOf(Catalog.RestoreEnded.class, catalog.receiveMessage());
        assertEquals(RestoreResult.Outcome.RESTORED, caller.receiveMessage().outcome());
        catalog.expectNoMessage(Duration.ofMillis(50));
    }

    @Test
    void theFilesOfTheFirstWave_areUnpinnedBeforeTheSecondWaveIsRead() {
        start();
        List<RestoreTask.Part> parts = new ArrayList<>();
        for (long k = 1; k <= RestoreTask.READS_PER_WAVE + 1; k++) {
            parts.add(RestoreTask.Part.ownFile(spec(k, k == 1 ? null : k - 1), disk.ref(), Tier.DISK));
        }
        kit.spawn(RestoreTask.create(records, catalogRef, parts, targets(parts.size()), caller.ref(), 1));
        List<RecordKey> firstWave = readAll(RestoreTask.READS_PER_WAVE);
        assertInstanceOf(Catalog.ReadSample.class, catalog.receiveMessage());
        for (int i = 0; i < RestoreTask.READS_PER_WAVE; i++) {
            assertInstanceOf(Catalog.AdoptRestored.class, catalog.receiveMessage());
        }
        Catalog.UnpinFiles first = assertInstanceOf(Catalog.UnpinFiles.class, catalog.receiveMessage());
        assertEquals(firstWave, first.keys(), "the first wave's files, released after their records were adopted");
        List<RecordKey> last = readAll(1);
        assertInstanceOf(Catalog.ReadSample.class, catalog.receiveMessage());
        assertInstanceOf(Catalog.AdoptRestored.class, catalog.receiveMessage());
        assertEquals(new Catalog.UnpinFiles(last), catalog.receiveMessage());
        assertInstanceOf(Catalog.RestoreEnded.class, catalog.receiveMessage());
        assertEquals(RestoreResult.Outcome.RESTORED, caller.receiveMessage().outcome());
        catalog.expectNoMessage(Duration.ofMillis(50));
    }

    @Test
    void anOwnFilePinnedForTheRead_isUnpinned_whenNoStagingCameWithinThePatience() {
        start();
        List<SlotList> hog = new ArrayList<>();
        synchronized (slots) {
            slots.request(new SlotLedger.Allocation(new RecordKey("rt", -1), TOTAL_SLOTS, Purpose.PUBLISH, false, 0, 0,
                    hog::add, () -> { }));
        }
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.ownFile(spec(1, null), disk.ref(), Tier.DISK));
        kit.spawn(RestoreTask.create(records, catalogRef, parts, targets(1), caller.ref(), 1));
        manualTime.timePasses(RestoreTask.STAGING_PATIENCE.plusMillis(100));
        assertEquals(RestoreResult.Outcome.FAILED, caller.receiveMessage().outcome());
        assertEquals(new Catalog.UnpinFiles(List.of(spec(1, null).key())), catalog.receiveMessage());
        catalog.expectNoMessage(Duration.ofMillis(50));
        synchronized (slots) {
            slots.release(hog.getFirst());
        }
    }

    @Test
    void aRestoreFromMemory_releasesItsPinsAndReportsTheUseInOneMessage_soNoMaxAgeSweepComesBetween() {
        start();
        SlotList resident = SlotList.of(IntStream.range(0, LAYOUT.slotsPerRecord(true)).toArray());
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.memory(spec(1, null), resident));
        kit.spawn(RestoreTask.create(records, catalogRef, parts, targets(1), caller.ref(), 1));
        RestoreResult r = caller.receiveMessage();
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome(), r.detail());
        Catalog.RestoreEnded released = assertInstanceOf(Catalog.RestoreEnded.class, catalog.receiveMessage(),
                "the pins and the use in one message");
        assertEquals(List.of(spec(1, null).key()), released.unpin());
        assertEquals(spec(1, null).key(), released.used().deepest());
        catalog.expectNoMessage(Duration.ofMillis(50));
    }

    @Test
    void aTaskThatCannotStart_givesBackItsMemoryAndFilePins_andAnswersFailed_clockFaultInjected() {
        start();
        RecordContext broken = new RecordContext(LAYOUT, host, device, metrics, traces, FaultInjection.NONE,
                RecordContext.DEFAULT_WRITE_CHECK, () -> {
                    throw new IllegalStateException("clock fault injected");
                }, new DeviceTransfers());
        SlotList resident = SlotList.of(0, 1);
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.memory(spec(1, null), resident),
                RestoreTask.Part.ownFile(spec(2, 1L), disk.ref(), Tier.DISK));
        kit.spawn(RestoreTask.create(broken, catalogRef, parts, targets(2), caller.ref(), 1));
        RestoreResult r = caller.receiveMessage();
        assertEquals(RestoreResult.Outcome.FAILED, r.outcome());
        assertEquals("the restore could not start: clock fault injected", r.detail());
        assertEquals(new Catalog.Unpin(List.of(spec(1, null).key())), catalog.receiveMessage());
        assertEquals(new Catalog.UnpinFiles(List.of(spec(2, 1L).key())), catalog.receiveMessage());
        catalog.expectNoMessage(Duration.ofMillis(50));
        disk.expectNoMessage(Duration.ofMillis(10));
    }

    @Test
    void aTaskThatFailsWhileAReadIsRunning_keepsThatReadsStagingUntilTheStoreSaysTheReadEnded_faultInjected() {
        start();
        java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean(true);
        RecordContext failing = new RecordContext(LAYOUT, host, device, metrics, traces, (actor, message) -> {
            if (actor.equals("RestoreTask") && message.getClass().getSimpleName().equals("ReadAnswered")
                    && armed.getAndSet(false)) {
                throw new IllegalStateException("fault injected: the task fails as its first read is answered");
            }
        }, RecordContext.DEFAULT_WRITE_CHECK, clock::get, new DeviceTransfers());
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.ownFile(spec(1, null), disk.ref(), Tier.DISK),
                RestoreTask.Part.ownFile(spec(2, 1L), disk.ref(), Tier.DISK));
        kit.spawn(RestoreTask.create(failing, catalogRef, parts, targets(2), caller.ref(), 1));
        Store.Read first = (Store.Read) disk.receiveMessage();
        Store.Read second = (Store.Read) disk.receiveMessage();
        int staged = 2 * spec(1, null).slots(LAYOUT);
        first.replyTo().tell(new Store.ReadDone(first.key(), 8192)); // the task fails on this answer
        assertEquals(RestoreResult.Outcome.FAILED, caller.receiveMessage().outcome());
        // The store is asked how each read it had not answered (for the task) ended, before the slots go back.
        List<Store.SettleRead> asked = List.of((Store.SettleRead) disk.receiveMessage(),
                (Store.SettleRead) disk.receiveMessage());
        org.awaitility.Awaitility.await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
                .until(() -> freeSlots() == TOTAL_SLOTS - staged); // no staging released while the reads may write
        for (Store.SettleRead a : asked) {
            a.replyTo().tell(new Store.ReadDone(a.key(), 8192));
        }
        second.replyTo().tell(new Store.ReadDone(second.key(), 8192)); // to a stopped task: nothing
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> freeSlots() == TOTAL_SLOTS);
    }

    @Test
    void theReadsOfOneWave_areTimedAsOneTransfer_theBytesOfAllReadsOverFirstStartToLastCompletion() {
        start();
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.stored(spec(1, null), disk.ref(), Tier.DISK, true),
                RestoreTask.Part.stored(spec(2, 1L), disk.ref(), Tier.DISK, true),
                RestoreTask.Part.stored(spec(3, 2L), disk.ref(), Tier.DISK, true));
        kit.spawn(RestoreTask.create(records, catalogRef, parts, targets(3), caller.ref(), 1));
        List<Store.Read> reads = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            reads.add((Store.Read) disk.receiveMessage()); // all three in flight at once: the wave started at 1 000
        }
        long[] completesAt = {3_000, 4_000, 9_000};
        long[] bytes = {8_192, 4_096, 12_288};
        for (int i = 0; i < 3; i++) {
            clock.set(completesAt[i]);
            reads.get(i).replyTo().tell(new Store.ReadDone(reads.get(i).key(), bytes[i]));
        }
        Catalog.ReadSample sample = assertInstanceOf(Catalog.ReadSample.class, catalog.receiveMessage());
        assertEquals(new Catalog.ReadSample(Tier.DISK, 8_192 + 4_096 + 12_288, 9_000 - 1_000), sample,
                "one sample for the wave: every read's bytes, from the first start to the last completion");
        for (int i = 0; i < 3; i++) {
            assertInstanceOf(Catalog.AdoptRestored.class, catalog.receiveMessage(), "no second sample");
        }
        assertEquals(RestoreResult.Outcome.RESTORED, caller.receiveMessage().outcome());
    }

    @Test
    void aFailedRead_endsTheMatchBeforeIt_andReportsTheLostFile() {
        start();
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.stored(spec(1, null), disk.ref(), Tier.DISK, true),
                RestoreTask.Part.stored(spec(2, 1L), disk.ref(), Tier.DISK, true));
        kit.spawn(RestoreTask.create(records, catalogRef, parts, targets(2), caller.ref(), 1));
        Store.Read first = (Store.Read) disk.receiveMessage();
        Store.Read second = (Store.Read) disk.receiveMessage();
        first.replyTo().tell(new Store.ReadDone(first.key(), 8192));
        second.replyTo().tell(new Store.ReadFailed(second.key(), true, "checksum"));
        assertEquals(new Catalog.FileLost(second.key()), catalog.receiveMessage());
        RestoreResult r = caller.receiveMessage();
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome());
        assertEquals(1, r.records());
    }

    @Test
    void theFirstRecordGoneFromThePoolBeforeItsRead_isAMiss_whileAFailedOrCorruptFirstReadIsAFailure() {
        start();
        // evicted from the pool between the lookup and the read; an I/O error; a disk file that failed validation
        record Case(Tier tier, boolean lost, String reason, RestoreResult.Outcome outcome) {
        }
        for (Case c : List.of(new Case(Tier.POOL, true, "no pool manager holds it", RestoreResult.Outcome.MISS),
                new Case(Tier.POOL, false, "EIO", RestoreResult.Outcome.FAILED),
                new Case(Tier.DISK, true, "checksum", RestoreResult.Outcome.FAILED))) {
            List<RestoreTask.Part> parts = List.of(RestoreTask.Part.stored(spec(1, null), disk.ref(), c.tier(), true),
                    RestoreTask.Part.stored(spec(2, 1L), disk.ref(), c.tier(), true));
            kit.spawn(RestoreTask.create(records, catalogRef, parts, targets(2), caller.ref(), 1));
            Store.Read first = (Store.Read) disk.receiveMessage();
            Store.Read second = (Store.Read) disk.receiveMessage();
            first.replyTo().tell(new Store.ReadFailed(first.key(), c.lost(), c.reason()));
            second.replyTo().tell(new Store.ReadDone(second.key(), 8192));
            RestoreResult r = caller.receiveMessage();
            assertEquals(c.outcome(), r.outcome(), c + ": " + r.detail());
            assertEquals(c.outcome() == RestoreResult.Outcome.MISS ? RestoreTask.GONE_BEFORE_READ
                    : RestoreTask.NOTHING_RESTORED, r.detail(), c.toString());
        }
    }

    @Test
    void noStagingSlotsWithinThePatience_endsTheMatch_andLeavesNoSlotTaken() {
        start();
        List<SlotList> hog = new ArrayList<>();
        synchronized (slots) {
            slots.request(new SlotLedger.Allocation(new RecordKey("rt", -1), TOTAL_SLOTS, Purpose.PUBLISH, false, 0, 0,
                    hog::add, () -> { }));
        }
        SlotList all = hog.getFirst();
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.stored(spec(1, null), disk.ref(), Tier.DISK, true));
        kit.spawn(RestoreTask.create(records, catalogRef, parts, targets(1), caller.ref(), 1));
        manualTime.expectNoMessageFor(RestoreTask.STAGING_PATIENCE.minusMillis(100), caller);
        manualTime.timePasses(Duration.ofMillis(200));
        RestoreResult r = caller.receiveMessage();
        assertEquals(RestoreResult.Outcome.FAILED, r.outcome());
        assertEquals(RestoreTask.NOTHING_RESTORED, r.detail());
        disk.expectNoMessage(Duration.ofMillis(50));
        synchronized (slots) {
            slots.release(all);
        }
        assertEquals(TOTAL_SLOTS, freeSlots(), "the cancelled request was not granted later");
    }
}
