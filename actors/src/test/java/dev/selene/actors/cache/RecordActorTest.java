package dev.selene.actors.cache;

import com.typesafe.config.ConfigFactory;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.value.PublishResult;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotAccounting;
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
 * One record actor against real host slots and a simulated device, with probes standing in for the catalog and the
 * disk store, on manual time: its copy into the slots it is given, its write and its retry. (Waiting for slots is
 * the catalog's: see {@code CatalogTest}.)
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
    /** The host slots, booked here as the catalog would. */
    private final SlotAccounting slots = new SlotAccounting(TOTAL_SLOTS, 8);
    private RecordContext records;

    @AfterEach
    void stop() {
        slots.checkInvariants();
        kit.shutdownTestKit();
        deviceAllocations.forEach(device::freeDevice);
        device.close();
        host.close();
        metrics.close();
    }

    private void start() {
        device.register(host);
        records = new RecordContext(LAYOUT, host, device, metrics, new TraceBook(64));
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

    /** A new record actor told to publish {@code s}, as generation 7, into slots granted to it. */
    private ActorRef<RecordActor.Command> publish(RecordSpec s) {
        ActorRef<RecordActor.Command> actor = recordActor();
        actor.tell(publication(7, s));
        return actor;
    }

    private RecordActor.Publish publication(long generation, RecordSpec s) {
        return new RecordActor.Publish(s, snapshot(s), generation, slots.allocate(s.slots(LAYOUT)), publisher.ref(),
                1);
    }

    /** The catalog's next report of a publication: the record resident (nothing is reported while it copies). */
    private Catalog.Resident copiedIn() {
        return assertInstanceOf(Catalog.Resident.class, catalog.receiveMessage());
    }

    @Test
    void publication_copiesIntoTheSlotsItIsGiven_thenResident_withTheSnapshotsBytes() {
        start();
        RecordSpec s = spec(1);
        RecordActor.Publish p = publication(7, s);
        recordActor().tell(p);
        Catalog.Resident resident = (Catalog.Resident) catalog.receiveMessage();
        assertEquals(s, resident.spec());
        assertEquals(p.slots(), resident.slots(), "copied into the slots granted");
        assertTrue(KeyedContent.verifyHostRecord(LAYOUT, host, resident.slots(), s.key(), true));
    }

    @Test
    void publicationWhoseSnapshotCannotBeCopied_failsThePublisher_andEndsItWithoutReleasingTheCatalogsSlots() {
        start();
        RecordSpec s = spec(2);
        SlotList granted = slots.allocate(s.slots(LAYOUT));
        ActorRef<RecordActor.Command> actor = recordActor();
        DevicePlacement tooShort = DevicePlacement.contiguous(LAYOUT, 0, false); // a row is wanted, none given
        actor.tell(new RecordActor.Publish(s, tooShort, 7, granted, publisher.ref(), 1));
        assertInstanceOf(PublishResult.Failed.class, publisher.receiveMessage());
        assertEquals(new Catalog.PublicationEnded(s.key(), actor), catalog.receiveMessage());
        for (int i = 0; i < granted.count(); i++) {
            assertTrue(slots.isInUse(granted.slot(i)), "the slots stay booked until the catalog frees them");
        }
    }

    @Test
    void spill_writesThroughTheStore_retriesOnceAfterAFailure_thenReportsTheCommit() {
        start();
        RecordSpec s = spec(4);
        ActorRef<RecordActor.Command> actor = publish(s);
        SlotList held = copiedIn().slots();
        actor.tell(new RecordActor.Spill(7, s, held));
        Store.Write w1 = (Store.Write) disk.receiveMessage();
        w1.replyTo().tell(new Store.WriteFailed(s.key(), false, "EIO"));
        Store.Write w2 = (Store.Write) disk.receiveMessage();
        assertEquals(held, w2.slots());
        w2.replyTo().tell(new Store.Written(s.key(), 4096, 1000));
        assertEquals(new Catalog.Committed(s.key(), 4096, 1000, actor), catalog.receiveMessage());
    }

    @Test
    void spillOnAFullDisk_isNotRetried_andIsReportedGivenUp() {
        start();
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
        records = new RecordContext(LAYOUT, host, device, metrics, new TraceBook(64),
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
        start();
        ActorRef<RecordActor.Command> actor = kit.spawn(RecordActor.create(records, catalog.ref(),
                new RecordActor.Stores(null, null)));
        for (long k = 10; k < 13; k++) {
            RecordSpec s = spec(k);
            actor.tell(publication(k, s));
            Catalog.Resident resident = copiedIn();
            assertEquals(s, resident.spec());
            assertEquals(actor, resident.actor(), "the same actor carried record " + k);
            assertTrue(KeyedContent.verifyHostRecord(LAYOUT, host, resident.slots(), s.key(), true));
            slots.release(resident.slots());
        }
    }

    @Test
    void recordActor_ignoresADropOfAnEarlierRecord_andWritesTheRecordItHoldsNow() {
        start();
        RecordSpec first = spec(20);
        ActorRef<RecordActor.Command> actor = publish(first);
        SlotList firstSlots = copiedIn().slots();
        actor.tell(new RecordActor.Dropped(7));
        assertEquals(new Catalog.Released(actor), catalog.receiveMessage());

        RecordSpec second = spec(21);
        actor.tell(publication(8, second));
        SlotList secondSlots = copiedIn().slots();
        actor.tell(new RecordActor.Dropped(7)); // late: about the first record
        actor.tell(new RecordActor.Spill(7, first, firstSlots));
        catalog.expectNoMessage(Duration.ofMillis(50));
        disk.expectNoMessage(Duration.ofMillis(10));
        actor.tell(new RecordActor.Spill(8, second, secondSlots));
        Store.Write w = (Store.Write) disk.receiveMessage();
        assertEquals(second, w.spec());
        w.replyTo().tell(new Store.Written(second.key(), 4096, 1));
        assertEquals(new Catalog.Committed(second.key(), 4096, 1, actor), catalog.receiveMessage());
    }
}
