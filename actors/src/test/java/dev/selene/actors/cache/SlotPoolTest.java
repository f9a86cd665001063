package dev.selene.actors.cache;

import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The slot pool's protocol with its evictor and publishers (B3, B17), driven by test probes. */
class SlotPoolTest {

    private static final ActorTestKit KIT = ActorTestKit.create();
    private static final CacheMetrics METRICS = CacheMetrics.forNode("slot_pool_test", new CacheCounters());

    @AfterAll
    static void stop() {
        KIT.shutdownTestKit();
        METRICS.close();
    }

    private final List<ActorRef<SlotPool.Command>> pools = new ArrayList<>();

    private ActorRef<SlotPool.Command> pool(int total, int intake) {
        ActorRef<SlotPool.Command> pool = KIT.spawn(SlotPool.create(total, intake, METRICS, new TraceBook(100)));
        pools.add(pool);
        return pool;
    }

    @org.junit.jupiter.api.AfterEach
    void accountingHolds() {
        for (ActorRef<SlotPool.Command> pool : pools) {
            TestProbe<String> check = KIT.createTestProbe();
            pool.tell(new SlotPool.CheckInvariants(-1, check.ref()));
            assertEquals("", check.receiveMessage(), "the slot pool's accounting holds");
        }
    }

    private static RecordKey key(long k) {
        return new RecordKey("pool", k);
    }

    @Test
    void allocationEatingIntoTheIntake_evictsColdestCleanFirst_inBatchesOfAnEighthOfTheIntake() {
        ActorRef<SlotPool.Command> pool = pool(100, 64);
        TestProbe<SlotPool.Evict> evictor = KIT.createTestProbe();
        pool.tell(new SlotPool.Attach(evictor.ref(), null));
        TestProbe<SlotPool.AllocateReply> publisher = KIT.createTestProbe();
        pool.tell(new SlotPool.Allocate(key(1), 36, Purpose.PUBLISH, false, publisher.ref()));
        SlotList held = assertInstanceOf(SlotPool.Allocated.class, publisher.receiveMessage()).slots();
        pool.tell(new SlotPool.CleanChanged(36)); // the record became clean: droppable at once

        pool.tell(new SlotPool.Allocate(key(2), 1, Purpose.PUBLISH, false, publisher.ref()));
        SlotPool.Evict evict = evictor.receiveMessage();
        assertTrue(evict.slots() >= 64 / 8, "batch of at least intake/8, asked " + evict.slots());
        publisher.expectNoMessage(); // the allocation waits for the eviction
        evict.replyTo().tell(new SlotPool.Evicted(List.of(held)));
        assertInstanceOf(SlotPool.Allocated.class, publisher.receiveMessage());
    }

    @Test
    void waitingPublications_areGrantedByMessageInArrivalOrder_andCancelledOnlyByTheirOwnRequester() {
        ActorRef<SlotPool.Command> pool = pool(10, 4);
        TestProbe<SlotPool.AllocateReply> first = KIT.createTestProbe();
        TestProbe<SlotPool.AllocateReply> second = KIT.createTestProbe();
        pool.tell(new SlotPool.Allocate(key(1), 10, Purpose.PUBLISH, false, first.ref()));
        SlotList all = assertInstanceOf(SlotPool.Allocated.class, first.receiveMessage()).slots();
        pool.tell(new SlotPool.Allocate(key(2), 6, Purpose.PUBLISH, true, first.ref()));
        pool.tell(new SlotPool.Allocate(key(3), 6, Purpose.PUBLISH, true, second.ref(), 33L));
        first.expectNoMessage();
        second.expectNoMessage();
        pool.tell(new SlotPool.Release(all, false));
        assertInstanceOf(SlotPool.Allocated.class, first.receiveMessage()); // the oldest first
        second.expectNoMessage(); // four free: key 3 keeps waiting
        pool.tell(new SlotPool.Cancel(key(3), Purpose.PUBLISH, 99L));
        second.expectNoMessage(); // another requester's cancel leaves this request in line
        pool.tell(new SlotPool.Cancel(key(3), Purpose.PUBLISH, 33L));
        assertInstanceOf(SlotPool.Cancelled.class, second.receiveMessage());
    }

    @Test
    void aRequestThatMayNotWait_isToldShortAtOnce() {
        ActorRef<SlotPool.Command> pool = pool(10, 4);
        TestProbe<SlotPool.AllocateReply> probe = KIT.createTestProbe();
        pool.tell(new SlotPool.Allocate(key(1), 10, Purpose.PUBLISH, false, probe.ref()));
        assertInstanceOf(SlotPool.Allocated.class, probe.receiveMessage());
        pool.tell(new SlotPool.Allocate(key(2), 5, Purpose.PUBLISH, false, probe.ref()));
        assertEquals(5, assertInstanceOf(SlotPool.Short.class, probe.receiveMessage()).missingSlots());
    }
}
