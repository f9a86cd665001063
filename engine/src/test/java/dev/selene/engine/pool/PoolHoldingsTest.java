package dev.selene.engine.pool;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A pool manager's holdings with a manual clock: room, recency, pins and max age; invariants after every test. */
class PoolHoldingsTest {

    private static final int SLOTS_PER_RECORD = 3;
    private static final long MAX_AGE = 100;

    private final AtomicLong clock = new AtomicLong(1_000);
    private PoolHoldings<String> holdings = new PoolHoldings<>(30, clock::get);

    @AfterEach
    void invariantsHold() {
        holdings.checkInvariants();
    }

    private static RecordKey key(String ns, long n) {
        return new RecordKey(ns, n);
    }

    private static RecordSpec spec(String ns, long n, Long parent) {
        return new RecordSpec(key(ns, n), parent == null ? null : key(ns, parent), true);
    }

    /** Uploads {@code spec} whole; the records evicted for its room. */
    private List<RecordKey> upload(RecordSpec spec) {
        PoolHoldings.Room room = holdings.reserve(spec, SLOTS_PER_RECORD);
        assertNotNull(room, spec.key() + " found room");
        holdings.hold(spec, 100, "image of " + spec.key().hash());
        return room.evicted();
    }

    private void uploadChain(String ns, long first, long last) {
        for (long k = first; k <= last; k++) {
            upload(spec(ns, k, k == first ? null : k - 1));
        }
    }

    private List<Long> expire() {
        return holdings.expire(MAX_AGE).stream().map(RecordKey::hash).toList();
    }

    @Test
    void reserve_whenFull_evictsTheLeastRecentlyUsedOfAnyNamespace() {
        for (long k = 1; k <= 10; k++) {
            upload(spec(k % 2 == 0 ? "a" : "b", k, null));
            clock.incrementAndGet();
        }
        holdings.use(key("b", 1)); // 1 is now the most recent; 2 the least

        assertEquals(List.of(key("a", 2)), upload(spec("b", 11, null)));
        assertTrue(holdings.holds(key("b", 1)));
        assertEquals(30, holdings.totalSlots());
        assertEquals(0, holdings.freeSlots());
    }

    @Test
    void refreshAge_keepsAStaleLeafFromExpiring_withoutMovingItInTheRecencyOrder() {
        for (long k = 1; k <= 10; k++) {
            upload(spec("a", k, null));
            clock.incrementAndGet();
        }
        clock.addAndGet(MAX_AGE + 1); // every record is stale
        assertTrue(holdings.refreshAge(key("a", 1)), "a descendant of it was used on another manager");
        assertFalse(holdings.refreshAge(key("a", 99)), "not held");

        List<Long> expired = expire();
        assertEquals(LongStream.rangeClosed(2, 10).boxed().toList(), expired, "the stale leaves, oldest first");
        assertTrue(holdings.holds(key("a", 1)));
        for (long k = 11; k <= 19; k++) {
            upload(spec("a", k, null)); // fills the room the sweep freed
        }
        assertEquals(List.of(key("a", 1)), upload(spec("a", 20, null)),
                "still the least recently used: a refreshed age is not a use");
    }

    @Test
    void reserve_whenEveryOtherRecordIsPinned_refusesAndDropsNothing() {
        for (long k = 1; k <= 10; k++) {
            upload(spec("a", k, null));
            holdings.pin(key("a", k));
        }
        holdings.unpin(key("a", 4));

        assertNull(holdings.reserve(spec("a", 20, null), 2 * SLOTS_PER_RECORD), "one unpinned record frees 3 of 6 slots");
        assertEquals(10, holdings.size(), "nothing dropped for a room that could not be made");
        assertNotNull(holdings.reserve(spec("a", 21, null), SLOTS_PER_RECORD));
        assertFalse(holdings.holds(key("a", 4)));
        holdings.unreserve(key("a", 21));
        for (long k = 1; k <= 10; k++) {
            if (k != 4) {
                holdings.unpin(key("a", k));
            }
        }
    }

    @Test
    void reserve_aSecondUploadOfTheSameKey_isRefused() {
        assertNotNull(holdings.reserve(spec("a", 1, null), SLOTS_PER_RECORD));
        assertNull(holdings.reserve(spec("a", 1, null), SLOTS_PER_RECORD));
        holdings.unreserve(key("a", 1));
        assertEquals(30, holdings.freeSlots());
    }

    @Test
    void drop_whilePinned_dooms_andTheRecordLeavesWithItsLastPin() {
        upload(spec("a", 1, null));
        holdings.pin(key("a", 1));
        holdings.pin(key("a", 1));

        assertFalse(holdings.drop(key("a", 1)));
        assertFalse(holdings.holds(key("a", 1)), "no new transfer starts from a doomed record");
        assertTrue(holdings.isDoomed(key("a", 1)));
        assertFalse(holdings.unpin(key("a", 1)));
        assertTrue(holdings.unpin(key("a", 1)), "left with its last pin");
        assertEquals(0, holdings.size());
        assertEquals(30, holdings.freeSlots());
    }

    @Test
    void expire_takesOnlyStaleLeaves_aStaleParentOfAFreshChildStays() {
        upload(spec("a", 1, null));
        upload(spec("a", 9, null));
        clock.addAndGet(80);
        upload(spec("a", 2, 1L)); // 1's child: 1's last use is refreshed
        clock.addAndGet(40); // 1 and 9 were uploaded 120 ago, 2 only 40

        assertEquals(List.of(9L), expire());
        assertTrue(holdings.holds(key("a", 1)));
        assertEquals(clock.get() - 40, holdings.lastUseNanos(key("a", 1)));
    }

    @Test
    void expire_aStaleParentWhoseChildIsBeingUploaded_stays_andGoesOnceTheUploadFails() {
        upload(spec("a", 1, null));
        upload(spec("a", 9, null));
        clock.addAndGet(MAX_AGE + 1);
        assertNotNull(holdings.reserve(spec("a", 2, 1L), SLOTS_PER_RECORD), "the child's upload starts");

        assertEquals(List.of(9L), expire(), "1's child is landing");
        holdings.unreserve(key("a", 2));
        assertEquals(List.of(1L), expire(), "the upload failed: 1 is a stale leaf again");
    }

    @Test
    void expire_oldestFirst_atMost64PerNamespace_andAStaleChainLeavesFromItsTip() {
        holdings = new PoolHoldings<>(3 * 200, clock::get);
        for (long k = 1; k <= 70; k++) {
            upload(spec("a", k, null));
            clock.incrementAndGet();
        }
        uploadChain("b", 100, 102);
        clock.addAndGet(MAX_AGE + 1);
        uploadChain("a", 500, 501); // fresh beside the stale ones
        upload(spec("b", 600, null));

        List<RecordKey> first = holdings.expire(MAX_AGE);
        assertEquals(LongStream.rangeClosed(1, 64).boxed().toList(),
                first.subList(0, 64).stream().map(RecordKey::hash).toList(), "a's 64 oldest, oldest first");
        assertEquals(List.of(102L, 101L, 100L), first.subList(64, 67).stream().map(RecordKey::hash).toList(),
                "b's stale chain from its tip, in the same sweep (b has its own 64)");
        assertEquals(List.of(65L, 66L, 67L, 68L, 69L, 70L), expire());
        assertEquals(List.of(), expire());
        assertTrue(holdings.holds(key("a", 500)) && holdings.holds(key("a", 501)) && holdings.holds(key("b", 600)));
    }

    @Test
    void expire_stopsAtTheFirstFreshLeaf_andPinnedLeavesWait() {
        uploadChain("a", 1, 2);
        upload(spec("a", 5, null));
        clock.addAndGet(MAX_AGE + 1);
        upload(spec("a", 7, null));
        holdings.pin(key("a", 5));

        assertEquals(List.of(2L, 1L), expire());
        assertTrue(holdings.holds(key("a", 5)), "pinned");
        assertTrue(holdings.holds(key("a", 7)), "fresh");
        holdings.unpin(key("a", 5));
        assertEquals(List.of(5L), expire());
    }

    @Test
    void use_refreshesHeldAncestors_withoutMovingThemInTheRecencyOrder() {
        holdings = new PoolHoldings<>(3 * SLOTS_PER_RECORD, clock::get);
        uploadChain("a", 1, 2);
        upload(spec("a", 9, null));
        clock.addAndGet(80);
        holdings.use(key("a", 2)); // refreshes 1, which stays the least recently used
        clock.addAndGet(40);

        assertEquals(List.of(9L), expire(), "1 was refreshed through its child's use; 9 was not");
        upload(spec("a", 10, null));
        assertEquals(List.of(key("a", 1)), upload(spec("a", 11, null)), "1 is still the coldest");
    }

    @Test
    void hold_withoutAReservation_isAnError() {
        assertThrows(IllegalStateException.class, () -> holdings.hold(spec("a", 1, null), 100, "x"));
    }

    @Test
    void expire_whenNothingIsStale_removesNothing() {
        uploadChain("a", 1, 3);
        clock.addAndGet(MAX_AGE);
        assertEquals(List.of(), expire());
        assertEquals(3, holdings.size());
    }
}
