package dev.selene.actors.cache;

import com.typesafe.config.ConfigFactory;
import dev.selene.actors.api.RestoreResult;
import dev.selene.actors.api.Tier;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * One restore task against a real slot pool and simulated device, with probes standing in for the catalog and the
 * disk store, on manual time: staged waves, the staging patience, what it reports back.
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
    private ActorRef<SlotPool.Command> slotPool;
    private RecordContext records;

    @AfterEach
    void stop() {
        if (slotPool != null) {
            TestProbe<String> check = kit.createTestProbe();
            slotPool.tell(new SlotPool.CheckInvariants(-1, check.ref()));
            assertEquals("", check.receiveMessage(), "the slot pool's accounting holds");
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
        TraceBook traces = new TraceBook(64);
        slotPool = kit.spawn(SlotPool.create(TOTAL_SLOTS, 16, metrics, traces));
        records = new RecordContext(LAYOUT, host, device, slotPool, metrics, traces, FaultInjection.NONE,
                RecordContext.DEFAULT_WRITE_CHECK, clock::get, new DeviceTransfers());
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
        TestProbe<SlotPool.Stats> probe = kit.createTestProbe();
        slotPool.tell(new SlotPool.GetStats(probe.ref()));
        return probe.receiveMessage().free();
    }

    @Test
    void diskRecords_areStagedReadAndCopied_thenHandedToTheCatalog_andTheUseIsReported() {
        start();
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.stored(spec(1, null), disk.ref(), Tier.DISK, true),
                RestoreTask.Part.stored(spec(2, 1L), disk.ref(), Tier.DISK, true));
        kit.spawn(RestoreTask.create(records, catalog.ref(), parts, targets(2), caller.ref(), 1));
        for (int i = 0; i < 2; i++) {
            Store.Read read = (Store.Read) disk.receiveMessage();
            read.replyTo().tell(new Store.ReadDone(read.key(), 8192));
        }
        assertInstanceOf(Catalog.ReadSample.class, catalog.receiveMessage());
        assertInstanceOf(Catalog.AdoptRestored.class, catalog.receiveMessage());
        assertInstanceOf(Catalog.AdoptRestored.class, catalog.receiveMessage());
        Catalog.Used used = (Catalog.Used) catalog.receiveMessage();
        assertEquals(spec(2, 1L).key(), used.deepest());
        RestoreResult r = caller.receiveMessage();
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome());
        assertEquals(2, r.fromDisk());
    }

    @Test
    void theReadsOfOneWave_areTimedAsOneTransfer_theBytesOfAllReadsOverFirstStartToLastCompletion() {
        start();
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.stored(spec(1, null), disk.ref(), Tier.DISK, true),
                RestoreTask.Part.stored(spec(2, 1L), disk.ref(), Tier.DISK, true),
                RestoreTask.Part.stored(spec(3, 2L), disk.ref(), Tier.DISK, true));
        kit.spawn(RestoreTask.create(records, catalog.ref(), parts, targets(3), caller.ref(), 1));
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
        kit.spawn(RestoreTask.create(records, catalog.ref(), parts, targets(2), caller.ref(), 1));
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
    void noStagingSlotsWithinThePatience_endsTheMatch_andLeavesNoSlotTaken() {
        start();
        TestProbe<SlotPool.AllocateReply> hog = kit.createTestProbe();
        slotPool.tell(new SlotPool.Allocate(new RecordKey("rt", -1), TOTAL_SLOTS, Purpose.PUBLISH, false,
                hog.ref()));
        SlotList all = assertInstanceOf(SlotPool.Allocated.class, hog.receiveMessage()).slots();
        List<RestoreTask.Part> parts = List.of(RestoreTask.Part.stored(spec(1, null), disk.ref(), Tier.DISK, true));
        kit.spawn(RestoreTask.create(records, catalog.ref(), parts, targets(1), caller.ref(), 1));
        manualTime.expectNoMessageFor(RestoreTask.STAGING_PATIENCE.minusMillis(100), caller);
        manualTime.timePasses(Duration.ofMillis(200));
        RestoreResult r = caller.receiveMessage();
        assertEquals(RestoreResult.Outcome.FAILED, r.outcome());
        assertEquals(RestoreTask.NOTHING_RESTORED, r.detail());
        disk.expectNoMessage(Duration.ofMillis(50));
        slotPool.tell(new SlotPool.Release(all, false));
        assertEquals(TOTAL_SLOTS, freeSlots(), "the cancelled request was not granted later");
    }
}
