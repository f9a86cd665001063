package dev.selene.actors.slots;

import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The slot pool's protocol with its evictor and publishers (B3, B17), driven by test probes. */
class SlotPoolTest {

    private static final ActorTestKit KIT = ActorTestKit.create();

    @AfterAll
    static void stop() {
        KIT.shutdownTestKit();
    }

    private static RecordKey key(long k) {
        return new RecordKey("pool", k);
    }

    @Test
    void allocationEatingIntoTheIntake_evictsColdestCleanFirst_inBatchesOfAnEighthOfTheIntake() {
        ActorRef<SlotPool.Command> pool = KIT.spawn(SlotPool.create(100, 64, new TraceBook(100)));
        TestProbe<SlotPool.Evict> evictor = KIT.createTestProbe();
        pool.tell(new SlotPool.Attach(evictor.ref(), null));
        TestProbe<SlotPool.AllocateReply> publisher = KIT.createTestProbe();
        pool.tell(new SlotPool.Allocate(key(1), 36, Purpose.PUBLISH, publisher.ref()));
        SlotList held = assertInstanceOf(SlotPool.Allocated.class, publisher.receiveMessage()).slots();
        pool.tell(new SlotPool.CleanChanged(36)); // the record became clean: droppable at once

        pool.tell(new SlotPool.Allocate(key(2), 1, Purpose.PUBLISH, publisher.ref()));
        SlotPool.Evict evict = evictor.receiveMessage();
        assertTrue(evict.slots() >= 64 / 8, "batch of at least intake/8, asked " + evict.slots());
        publisher.expectNoMessage(); // the allocation waits for the eviction
        evict.replyTo().tell(new SlotPool.Evicted(List.of(held)));
        assertInstanceOf(SlotPool.Allocated.class, publisher.receiveMessage());
    }

    @Test
    void slotsFreedUnderPressure_goToTheOldestWaitingPublicationFirst() {
        ActorRef<SlotPool.Command> pool = KIT.spawn(SlotPool.create(10, 4, new TraceBook(100)));
        TestProbe<SlotPool.AllocateReply> first = KIT.createTestProbe();
        TestProbe<SlotPool.AllocateReply> second = KIT.createTestProbe();
        pool.tell(new SlotPool.Allocate(key(1), 10, Purpose.PUBLISH, first.ref()));
        SlotList all = assertInstanceOf(SlotPool.Allocated.class, first.receiveMessage()).slots();
        pool.tell(new SlotPool.Allocate(key(2), 5, Purpose.PUBLISH, first.ref()));
        assertInstanceOf(SlotPool.Short.class, first.receiveMessage()); // key 2 now waits, oldest
        pool.tell(new SlotPool.Allocate(key(3), 5, Purpose.PUBLISH, second.ref()));
        assertInstanceOf(SlotPool.Short.class, second.receiveMessage());
        pool.tell(new SlotPool.Release(all, false));
        // Ten slots free again: key 3 asks first, but key 2's five are owed before it; both fit, so both go.
        pool.tell(new SlotPool.Allocate(key(3), 5, Purpose.PUBLISH, second.ref()));
        assertInstanceOf(SlotPool.Allocated.class, second.receiveMessage());
        pool.tell(new SlotPool.Allocate(key(4), 5, Purpose.PUBLISH, second.ref()));
        SlotPool.Short s = assertInstanceOf(SlotPool.Short.class, second.receiveMessage());
        assertEquals(5, s.missingSlots(), "key 2's slots stay owed to it");
        pool.tell(new SlotPool.Allocate(key(2), 5, Purpose.PUBLISH, first.ref()));
        assertInstanceOf(SlotPool.Allocated.class, first.receiveMessage());
    }
}
