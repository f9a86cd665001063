package dev.selene.actors.cache;

import com.typesafe.config.ConfigFactory;
import dev.selene.actors.api.PublishResult;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One record actor against a real slot pool and simulated device, with probes standing in for the catalog and the
 * disk store, on manual time: its lease, its copy, its write and its retry.
 */
class RecordActorTest {

    private static final Layout LAYOUT = Layout.small();
    private static final int TOTAL_SLOTS = 64;

    private final ActorTestKit kit = ActorTestKit.create(ManualTime.config()
            .withFallback(ConfigFactory.load("application-test")));
    private final ManualTime manualTime = ManualTime.get(kit.system());
    private final SimulatedDevice device = SimulatedDevice.create();
    private final HostMemory host = HostMemory.allocate(LAYOUT, TOTAL_SLOTS);
    private final CacheCounters counters = new CacheCounters();
    private final CacheMetrics metrics = CacheMetrics.forNode("record_actor_test", counters);
    private final List<Long> deviceAllocations = new ArrayList<>();
    private final TestProbe<Catalog.Command> catalog = kit.createTestProbe();
    private final TestProbe<Store.Command> disk = kit.createTestProbe();
    private final TestProbe<PublishResult> publisher = kit.createTestProbe();
    private final TestProbe<SlotPool.Granted> grants = kit.createTestProbe();
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

    private void start(int intake) {
        device.register(host);
        TraceBook traces = new TraceBook(64);
        slotPool = kit.spawn(SlotPool.create(TOTAL_SLOTS, intake, metrics, traces));
        records = new RecordContext(LAYOUT, host, device, slotPool, metrics, traces);
    }

    private static RecordSpec spec(long k) {
        return new RecordSpec(new RecordKey("ra", k), null, true);
    }

    private DevicePlacement snapshot(RecordSpec s) {
        long base = device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, s.hasRow()));
        deviceAllocations.add(base);
        DevicePlacement p = DevicePlacement.contiguous(LAYOUT, base, s.hasRow());
        KeyedContent.fillRecord(device, LAYOUT, p, s.key(), s.hasRow());
        return p;
    }

    /** An idle record actor writing to the disk probe. */
    private ActorRef<RecordActor.Command> recordActor() {
        return kit.spawn(RecordActor.create(records, catalog.ref(), new RecordActor.Stores(disk.ref(), null)));
    }

    /** A new record actor told to publish {@code s}, as generation 7, waiting up to {@code patience} for slots. */
    private ActorRef<RecordActor.Command> publish(RecordSpec s, Duration patience) {
        ActorRef<RecordActor.Command> actor = recordActor();
        actor.tell(publication(7, s, patience));
        return actor;
    }

    private RecordActor.Publish publication(long generation, RecordSpec s, Duration patience) {
        return new RecordActor.Publish(s, snapshot(s), patience,
                new SlotPool.LeaseNotice(generation, grants.ref()), publisher.ref(), 1);
    }

    /** The catalog's next report of a publication: the record resident (nothing is reported while it copies). */
    private Catalog.Resident copiedIn() {
        return assertInstanceOf(Catalog.Resident.class, catalog.receiveMessage());
    }

    /** Asks the slot pool until {@code n} requests wait in its line (at most 5 s). */
    private void awaitWaiting(int n) {
        TestProbe<SlotPool.Stats> stats = kit.createTestProbe();
        for (int i = 0; i < 500; i++) {
            slotPool.tell(new SlotPool.GetStats(stats.ref()));
            if (stats.receiveMessage().waiting() == n) {
                return;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("not " + n + " waiting in the slot pool's line within 5 s");
    }

    /** Takes every slot from the pool, so that a publication has to wait in line. */
    private SlotList fillPool() {
        return take(TOTAL_SLOTS);
    }

    /** Takes {@code slots} slots from the pool. */
    private SlotList take(int slots) {
        TestProbe<SlotPool.AllocateReply> probe = kit.createTestProbe();
        slotPool.tell(new SlotPool.Allocate(new RecordKey("ra", -1), slots, Purpose.PUBLISH, false,
                probe.ref()));
        return assertInstanceOf(SlotPool.Allocated.class, probe.receiveMessage()).slots();
    }

    @Test
    void publication_copiesIntoItsSlots_theGrantIsToldToItsOwnerFirst_thenResident_withTheSnapshotsBytes() {
        start(8);
        RecordSpec s = spec(1);
        publish(s, Duration.ofSeconds(1));
        SlotPool.Granted granted = grants.receiveMessage();
        assertEquals(7, granted.ticket(), "the owner knows the grant before the actor copies into it");
        Catalog.Resident resident = (Catalog.Resident) catalog.receiveMessage();
        assertEquals(s, resident.spec());
        assertEquals(granted.slots(), resident.slots(), "copied into the slots granted");
        assertTrue(KeyedContent.verifyHostRecord(LAYOUT, host, resident.slots(), s.key(), true));
    }

    @Test
    void publicationWaitingForSlots_isGrantedWhenSlotsFreeUp_withinItsLease() {
        start(8);
        SlotList all = fillPool();
        RecordSpec s = spec(2);
        publish(s, Duration.ofSeconds(2));
        manualTime.timePasses(Duration.ofSeconds(1));
        catalog.expectNoMessage(Duration.ofMillis(50));
        slotPool.tell(new SlotPool.Release(all, false));
        assertEquals(s.key(), grants.receiveMessage().key());
        assertEquals(s, assertInstanceOf(Catalog.Resident.class, catalog.receiveMessage()).spec());
    }

    @Test
    void publicationWhoseLeaseEndsWhileWaiting_isAbandonedWithNoSpace_andHoldsNoSlot() {
        start(8);
        fillPool();
        RecordSpec s = spec(3);
        ActorRef<RecordActor.Command> actor = publish(s, Duration.ofSeconds(2));
        // The lease's timer starts when the actor hears it is queued: advancing the manual clock before that would
        // leave the timer to start later, at the advanced time, and the lease would outlive the test's clock.
        awaitWaiting(1);
        manualTime.expectNoMessageFor(Duration.ofMillis(1900), publisher);
        manualTime.timePasses(Duration.ofMillis(200));
        PublishResult.Abandoned a = assertInstanceOf(PublishResult.Abandoned.class, publisher.receiveMessage());
        assertEquals("no_space", a.reason());
        assertEquals(new Catalog.PublicationEnded(s.key(), actor), catalog.receiveMessage());
        assertEquals(1, counters.get("abandoned.no_space"));
        TestProbe<SlotPool.Stats> stats = kit.createTestProbe();
        slotPool.tell(new SlotPool.GetStats(stats.ref()));
        assertEquals(0, stats.receiveMessage().waiting(), "its place in line was cancelled");
    }

    @Test
    void spill_writesThroughTheStore_retriesOnceAfterAFailure_thenReportsTheCommit() {
        start(8);
        RecordSpec s = spec(4);
        ActorRef<RecordActor.Command> actor = publish(s, Duration.ZERO);
        SlotList slots = copiedIn().slots();
        actor.tell(new RecordActor.Spill(7, s, slots));
        Store.Write w1 = (Store.Write) disk.receiveMessage();
        w1.replyTo().tell(new Store.WriteFailed(s.key(), false, "EIO"));
        Store.Write w2 = (Store.Write) disk.receiveMessage();
        assertEquals(slots, w2.slots());
        w2.replyTo().tell(new Store.Written(s.key(), 4096, 1000));
        assertEquals(new Catalog.Committed(s.key(), 4096, 1000, actor), catalog.receiveMessage());
    }

    @Test
    void spillOnAFullDisk_isNotRetried_andIsReportedGivenUp() {
        start(8);
        RecordSpec s = spec(5);
        ActorRef<RecordActor.Command> actor = recordActor();
        actor.tell(new RecordActor.Spill(1, s, SlotList.of(0)));
        Store.Write w = (Store.Write) disk.receiveMessage();
        w.replyTo().tell(new Store.WriteFailed(s.key(), true, "ENOSPC"));
        Catalog.WriteGivenUp g = (Catalog.WriteGivenUp) catalog.receiveMessage();
        assertTrue(g.diskFull());
        disk.expectNoMessage(Duration.ofMillis(50));
    }

    @Test
    void writeWithoutAnAnswer_asksTheStoreHowItEnded_afterTheWriteCheck() {
        device.register(host);
        slotPool = kit.spawn(SlotPool.create(TOTAL_SLOTS, 8, metrics, new TraceBook(64)));
        records = new RecordContext(LAYOUT, host, device, slotPool, metrics, new TraceBook(64),
                FaultInjection.NONE, Duration.ofSeconds(30), System::nanoTime, new DeviceTransfers());
        RecordSpec s = spec(6);
        ActorRef<RecordActor.Command> actor = recordActor();
        actor.tell(new RecordActor.Spill(1, s, SlotList.of(0)));
        assertInstanceOf(Store.Write.class, disk.receiveMessage()); // lost: never answered
        manualTime.timePasses(Duration.ofSeconds(31));
        Store.Settle settle = (Store.Settle) disk.receiveMessage();
        assertEquals(s.key(), settle.key());
        settle.replyTo().tell(new Store.Written(s.key(), 4096, 1));
        assertInstanceOf(Catalog.Committed.class, catalog.receiveMessage());
    }

    @Test
    void recordActor_whoseRecordIsAtRest_publishesTheNextRecordItIsGiven() {
        start(8);
        ActorRef<RecordActor.Command> actor = kit.spawn(RecordActor.create(records, catalog.ref(),
                new RecordActor.Stores(null, null)));
        for (long k = 10; k < 13; k++) {
            RecordSpec s = spec(k);
            actor.tell(publication(k, s, Duration.ZERO));
            Catalog.Resident resident = copiedIn();
            assertEquals(s, resident.spec());
            assertEquals(actor, resident.actor(), "the same actor carried record " + k);
            assertTrue(KeyedContent.verifyHostRecord(LAYOUT, host, resident.slots(), s.key(), true));
            slotPool.tell(new SlotPool.Release(resident.slots(), false));
        }
    }

    @Test
    void recordActor_ignoresADropOfAnEarlierRecord_andWritesTheRecordItHoldsNow() {
        start(8);
        RecordSpec first = spec(20);
        ActorRef<RecordActor.Command> actor = publish(first, Duration.ZERO);
        SlotList firstSlots = copiedIn().slots();
        actor.tell(new RecordActor.Dropped(7));
        assertEquals(new Catalog.Released(actor), catalog.receiveMessage());
        slotPool.tell(new SlotPool.Release(firstSlots, false));

        RecordSpec second = spec(21);
        actor.tell(publication(8, second, Duration.ZERO));
        SlotList slots = copiedIn().slots();
        actor.tell(new RecordActor.Dropped(7)); // late: about the first record
        actor.tell(new RecordActor.Spill(7, first, firstSlots));
        catalog.expectNoMessage(Duration.ofMillis(50));
        disk.expectNoMessage(Duration.ofMillis(10));
        actor.tell(new RecordActor.Spill(8, second, slots));
        Store.Write w = (Store.Write) disk.receiveMessage();
        assertEquals(second, w.spec());
        w.replyTo().tell(new Store.Written(second.key(), 4096, 1));
        assertEquals(new Catalog.Committed(second.key(), 4096, 1, actor), catalog.receiveMessage());
    }

    @Test
    void recordActor_whoseEarlierPublicationWaitedAndWasGranted_letsTheNextOneWaitItsOwnFullLease() {
        start(8);
        SlotList all = fillPool();
        RecordSpec first = spec(30);
        ActorRef<RecordActor.Command> actor = kit.spawn(RecordActor.create(records, catalog.ref(),
                new RecordActor.Stores(null, null))); // memory only: idle again once resident
        actor.tell(publication(7, first, Duration.ofSeconds(2)));
        manualTime.timePasses(Duration.ofMillis(500));
        slotPool.tell(new SlotPool.Release(all, false));
        SlotList firstSlots = copiedIn().slots();
        all = take(TOTAL_SLOTS - firstSlots.count()); // the next one waits too: every other slot is taken again

        RecordSpec second = spec(31);
        actor.tell(publication(8, second, Duration.ofSeconds(5)));
        manualTime.expectNoMessageFor(Duration.ofSeconds(3), publisher); // past where the first lease would end
        catalog.expectNoMessage(Duration.ofMillis(50));
        slotPool.tell(new SlotPool.Release(firstSlots, false));
        slotPool.tell(new SlotPool.Release(all, false));
        assertEquals(second, copiedIn().spec(), "granted within its own lease, not abandoned at the first one's end");
    }
}
