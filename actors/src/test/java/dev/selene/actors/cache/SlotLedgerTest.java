package dev.selene.actors.cache;

import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.trace.TraceSource;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import org.apache.pekko.actor.ActorPaths;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The catalog's slot ledger as a plain object: grants in arrival order, eviction of clean records before a grant
 * eats into the intake, refusals of requests that may not wait, cancellation, and the pressure it reports.
 */
class SlotLedgerTest {

    private final List<SlotLedger> ledgers = new ArrayList<>();
    /** The clean records the evictor may drop, oldest first: each one's slots. */
    private final List<SlotList> clean = new ArrayList<>();
    private final List<Integer> evictionsAsked = new ArrayList<>();

    private SlotLedger ledger(int total, int intake) {
        SlotLedger l = new SlotLedger(total, intake, this::cleanSlots, this::evict, new TraceBook(100),
                new TraceSource("Catalog", ActorPaths.fromString("pekko://test/user/catalog")), FaultInjection.NONE);
        ledgers.add(l);
        return l;
    }

    @AfterEach
    void invariantsHold() {
        for (SlotLedger l : ledgers) {
            assertEquals("", l.invariantViolation());
        }
    }

    private long cleanSlots() {
        return clean.stream().mapToLong(SlotList::count).sum();
    }

    private List<SlotList> evict(int wanted) {
        evictionsAsked.add(wanted);
        List<SlotList> dropped = new ArrayList<>();
        int freed = 0;
        while (freed < wanted && !clean.isEmpty()) {
            SlotList s = clean.removeFirst();
            dropped.add(s);
            freed += s.count();
        }
        return dropped;
    }

    private static RecordKey key(long k) {
        return new RecordKey("ledger", k);
    }

    /** A request whose grant lands in {@code grants}; cancelling it adds -1. */
    private static SlotLedger.Allocation request(long k, int slots, boolean waits, long id, List<Object> grants) {
        return new SlotLedger.Allocation(key(k), slots, Purpose.PUBLISH, waits, id, 0, grants::add,
                () -> grants.add(-1));
    }

    private static SlotList granted(List<Object> grants) {
        return (SlotList) grants.getLast();
    }

    @Test
    void allocationEatingIntoTheIntake_evictsColdestCleanFirst_inBatchesOfAnEighthOfTheIntake() {
        SlotLedger ledger = ledger(100, 64);
        List<Object> grants = new ArrayList<>();
        assertEquals(SlotLedger.Answer.GRANTED, ledger.request(request(1, 36, false, 0, grants)));
        clean.add(granted(grants)); // the record became clean: droppable at once

        assertEquals(SlotLedger.Answer.GRANTED, ledger.request(request(2, 1, false, 0, grants)));
        assertEquals(1, evictionsAsked.size());
        assertTrue(evictionsAsked.getFirst() >= 64 / 8, "batch of at least intake/8, asked " + evictionsAsked);
        assertTrue(clean.isEmpty(), "the clean record was dropped for the grant");
        assertEquals(99, ledger.stats().free());
    }

    @Test
    void waitingPublications_areGrantedInArrivalOrder_andCancelledOnlyByTheirOwnRequester() {
        SlotLedger ledger = ledger(10, 4);
        List<Object> first = new ArrayList<>();
        List<Object> second = new ArrayList<>();
        ledger.request(request(1, 10, false, 0, first));
        SlotList all = granted(first);
        assertEquals(SlotLedger.Answer.QUEUED, ledger.request(request(2, 6, true, 0, first)));
        assertEquals(SlotLedger.Answer.QUEUED, ledger.request(request(3, 6, true, 33, second)));
        assertEquals(1, first.size());
        ledger.release(all);
        assertEquals(2, first.size(), "the oldest first");
        assertTrue(second.isEmpty(), "four free: key 3 keeps waiting");
        assertEquals(false, ledger.cancel(key(3), Purpose.PUBLISH, 99));
        assertTrue(second.isEmpty(), "another requester's cancel leaves this request in line");
        assertTrue(ledger.cancel(key(3), Purpose.PUBLISH, 33));
        assertEquals(List.of(-1), second);
        assertEquals(0, ledger.stats().waiting());
    }

    @Test
    void aRequestThatMayNotWait_isShortAtOnce_evenBehindAWaitingOne() {
        SlotLedger ledger = ledger(10, 4);
        List<Object> grants = new ArrayList<>();
        ledger.request(request(1, 10, false, 0, grants));
        assertEquals(SlotLedger.Answer.SHORT, ledger.request(request(2, 5, false, 0, grants)));
        assertEquals(SlotLedger.Answer.QUEUED, ledger.request(request(3, 6, true, 0, grants)));
        assertEquals(SlotLedger.Answer.SHORT, ledger.request(request(4, 1, false, 0, grants)));
        assertEquals(1, grants.size());
    }

    @Test
    void aRequestLargerThanThePool_isOversize() {
        SlotLedger ledger = ledger(10, 4);
        assertEquals(SlotLedger.Answer.OVERSIZE, ledger.request(request(1, 11, true, 0, new ArrayList<>())));
        assertEquals(10 - 2, ledger.maxGrant(Purpose.STAGING));
    }

    @Test
    void pressure_isReportedOncePerChange_theWaitingRequestsIncluded() {
        SlotLedger ledger = ledger(20, 4);
        assertEquals(0, ledger.takePressure().deficitSlots());
        assertNull(ledger.takePressure(), "nothing changed");
        List<Object> grants = new ArrayList<>();
        ledger.request(request(1, 15, false, 0, grants)); // 5 free: 3 short of two intakes
        assertEquals(3, ledger.takePressure().deficitSlots());
        ledger.request(request(2, 6, true, 0, grants));
        SlotLedger.Pressure p = ledger.takePressure();
        assertEquals(3 + 6, p.deficitSlots(), "the waiting request counts");
        clean.add(granted(grants)); // all 15 clean now
        assertEquals(6, ledger.takePressure().deficitSlots());
    }
}
