package dev.selene.engine.index;

import dev.selene.engine.invariants.EngineInvariants;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordIndexTest {

    private static final boolean DISK_MODE = false;
    private static final boolean MEMORY_ONLY = true;

    @RegisterExtension
    final EngineInvariants invariants = new EngineInvariants();

    private int nextSlot;

    private RecordIndex index(boolean memoryOnly) {
        return invariants.track(new RecordIndex(memoryOnly));
    }

    private static RecordKey key(long n) {
        return new RecordKey("ns", n);
    }

    private SlotList slots(int count) {
        int[] s = IntStream.range(nextSlot, nextSlot + count).toArray();
        nextSlot += count;
        return SlotList.of(s);
    }

    private RecordIndex.Entry insert(RecordIndex index, long k, Long parent, int slotCount, boolean durable,
                                     long now) {
        RecordSpec spec = new RecordSpec(key(k), parent == null ? null : key(parent), true);
        return index.insert(spec, slots(slotCount), durable, now);
    }

    private static List<Long> dropAll(RecordIndex index) {
        List<Long> order = new ArrayList<>();
        for (RecordIndex.Entry e = index.dropColdest(); e != null; e = index.dropColdest()) {
            order.add(e.key().hash());
        }
        return order;
    }

    // --- LRU ----------------------------------------------------------------------------------------------------

    @Test
    void dropColdest_dropsTheLeastRecentlyInsertedCleanRecordFirst() {
        RecordIndex index = index(DISK_MODE);
        invariants.expectAllReleased();
        insert(index, 1, null, 4, true, 10);
        insert(index, 2, null, 4, true, 20);
        insert(index, 3, null, 4, true, 30);

        assertEquals(List.of(1L, 2L, 3L), dropAll(index));
        assertNull(index.dropColdest(), "nothing left to drop");
    }

    @Test
    void dropColdest_removesTheRecordFromTheIndex() {
        RecordIndex index = index(DISK_MODE);
        invariants.expectAllReleased();
        RecordIndex.Entry inserted = insert(index, 1, null, 4, true, 10);

        RecordIndex.Entry dropped = index.dropColdest();

        assertSame(inserted, dropped);
        assertFalse(index.contains(key(1)));
        assertNull(index.get(key(1)));
        assertEquals(0, index.size());
    }

    @Test
    void touch_movesTheRecordToTheHotEnd() {
        RecordIndex index = index(DISK_MODE);
        invariants.expectAllReleased();
        insert(index, 1, null, 4, true, 10);
        insert(index, 2, null, 4, true, 20);
        insert(index, 3, null, 4, true, 30);

        index.touch(key(1), 40);

        assertEquals(40, index.get(key(1)).lastUseNanos());
        assertEquals(List.of(2L, 3L, 1L), dropAll(index));
    }

    @Test
    void touch_ofAParkedRecord_movesItToTheHotEndOfTheParkedList() {
        RecordIndex index = index(DISK_MODE);
        insert(index, 1, null, 4, false, 10);
        insert(index, 2, null, 4, false, 20);
        insert(index, 3, null, 4, false, 30);

        index.touch(key(1), 40);

        assertEquals(List.of(2L, 3L, 1L), index.coldestParked(10).stream().map(e -> e.key().hash()).toList());
    }

    @Test
    void touch_ofAnAbsentKey_changesNothing() {
        RecordIndex index = index(DISK_MODE);
        insert(index, 1, null, 4, true, 10);

        index.touch(key(99), 50);

        assertEquals(10, index.get(key(1)).lastUseNanos());
        assertEquals(1, index.size());
    }

    @Test
    void touch_ofAChild_refreshesItsAncestorsLastUseWithoutReorderingThem() {
        RecordIndex index = index(DISK_MODE);
        invariants.expectAllReleased();
        insert(index, 9, null, 2, true, 5);     // unrelated, coldest
        insert(index, 1, null, 2, true, 10);    // root
        insert(index, 2, 1L, 2, true, 20);      // child of 1
        insert(index, 3, 2L, 2, true, 30);      // grandchild
        insert(index, 8, null, 2, true, 40);    // unrelated, hot

        index.touch(key(3), 100);

        assertAll(
                () -> assertEquals(100, index.get(key(3)).lastUseNanos()),
                () -> assertEquals(100, index.get(key(2)).lastUseNanos(), "parent refreshed"),
                () -> assertEquals(100, index.get(key(1)).lastUseNanos(), "root refreshed"),
                () -> assertEquals(5, index.get(key(9)).lastUseNanos(), "unrelated untouched"),
                () -> assertEquals(40, index.get(key(8)).lastUseNanos(), "unrelated untouched"));
        assertEquals(List.of(9L, 1L, 2L, 8L, 3L), dropAll(index),
                "only the touched record moved; its ancestors kept their places");
    }

    // --- memory-only (B6): leaves first ----------------------------------------------------------------------

    @Test
    void memoryOnly_parentWithAResidentChild_isNotDroppableUntilTheChildLeaves() {
        RecordIndex index = index(MEMORY_ONLY);
        invariants.expectAllReleased();
        insert(index, 1, null, 3, false, 10);
        insert(index, 2, 1L, 5, false, 20);

        assertEquals(5, index.droppableSlots(), "only the leaf is droppable");
        assertEquals(0, index.parkedSlots(), "memory-only keeps no parked list");
        assertEquals(1, index.get(key(1)).residentChildren());

        assertEquals(2L, index.dropColdest().key().hash(), "the leaf goes although its parent is colder");
        assertEquals(3, index.droppableSlots(), "the parent became droppable");
        assertEquals(0, index.get(key(1)).residentChildren());
        assertEquals(1L, index.dropColdest().key().hash());
        assertNull(index.dropColdest());
    }

    @Test
    void memoryOnly_parentOfTwoChildren_becomesDroppableOnlyAfterBothLeave() {
        RecordIndex index = index(MEMORY_ONLY);
        invariants.expectAllReleased();
        insert(index, 1, null, 1, false, 10);
        insert(index, 2, 1L, 1, false, 20);
        insert(index, 3, 1L, 1, false, 30);

        index.remove(key(2));
        assertEquals(1, index.get(key(1)).residentChildren());
        assertEquals(1, index.droppableSlots(), "one child still pins the parent in memory");

        assertEquals(3L, index.dropColdest().key().hash());
        assertEquals(1L, index.dropColdest().key().hash());
        assertNull(index.dropColdest());
    }

    @Test
    void memoryOnly_chainsAreEvictedFromTheTail() {
        RecordIndex index = index(MEMORY_ONLY);
        invariants.expectAllReleased();
        insert(index, 1, null, 1, false, 10);
        insert(index, 2, 1L, 1, false, 20);
        insert(index, 3, 2L, 1, false, 30);
        insert(index, 4, 3L, 1, false, 40);

        assertEquals(List.of(4L, 3L, 2L, 1L), dropAll(index));
    }

    @Test
    void memoryOnly_aResidentRecordsAncestorsStayResident() {
        RecordIndex index = index(MEMORY_ONLY);
        insert(index, 1, null, 1, false, 10);
        insert(index, 2, 1L, 1, false, 20);
        insert(index, 10, null, 1, false, 30);
        insert(index, 11, 10L, 1, false, 40);

        index.dropColdest();
        index.dropColdest();

        for (RecordIndex.Entry e : index.entries()) {
            RecordKey parent = e.spec().parent();
            assertTrue(parent == null || index.contains(parent), e.key() + " lost its parent");
        }
    }

    @Test
    void memoryOnly_parentThatBecomesDroppable_keepsItsPlaceByLastUse() {
        RecordIndex index = index(MEMORY_ONLY);
        invariants.expectAllReleased();
        insert(index, 1, null, 1, false, 10);   // parent, used long ago
        insert(index, 2, 1L, 1, false, 20);     // its child
        insert(index, 3, null, 1, false, 30);   // unrelated leaf, hotter than the parent

        index.remove(key(2));

        assertEquals(List.of(1L, 3L), dropAll(index), "the parent rejoins at the cold end, where its use belongs");
    }

    // --- pins ---------------------------------------------------------------------------------------------------

    @Test
    void pinnedRecord_isNeverDropped() {
        RecordIndex index = index(DISK_MODE);
        insert(index, 1, null, 2, true, 10);
        insert(index, 2, null, 2, true, 20);
        index.pin(key(1));

        assertEquals(2, index.droppableSlots());
        assertEquals(List.of(2L), dropAll(index));
        assertTrue(index.contains(key(1)));
        assertEquals(1, index.get(key(1)).pins());
    }

    @Test
    void pinnedRecord_inMemoryOnlyMode_isNeverDropped() {
        RecordIndex index = index(MEMORY_ONLY);
        insert(index, 1, null, 2, false, 10);
        index.pin(key(1));

        assertNull(index.dropColdest());
        assertEquals(0, index.droppableSlots());
        assertTrue(index.contains(key(1)));
    }

    @Test
    void pins_nest_andTheLastUnpinMakesTheRecordDroppableAgain() {
        RecordIndex index = index(DISK_MODE);
        invariants.expectAllReleased();
        insert(index, 1, null, 2, true, 10);
        index.pin(key(1));
        index.pin(key(1));

        index.unpin(key(1));
        assertNull(index.dropColdest(), "one pin is still held");

        index.unpin(key(1));
        assertEquals(0, index.get(key(1)).pins());
        assertEquals(2, index.droppableSlots());
        assertEquals(1L, index.dropColdest().key().hash());
    }

    @Test
    void unpin_ofAnUnpinnedRecord_isRejected() {
        RecordIndex index = index(DISK_MODE);
        insert(index, 1, null, 2, true, 10);

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> index.unpin(key(1)));

        assertTrue(e.getMessage().contains("is not pinned"), e.getMessage());
    }

    @Test
    void pinUnpinAndMarkDurable_ofAnAbsentRecord_areRejected() {
        RecordIndex index = index(DISK_MODE);

        assertTrue(assertThrows(IllegalStateException.class, () -> index.pin(key(7))).getMessage()
                .contains("ns/0000000000000007 is not resident"));
        assertThrows(IllegalStateException.class, () -> index.unpin(key(7)));
        assertThrows(IllegalStateException.class, () -> index.markDurable(key(7)));
    }

    @Test
    void pinnedRecord_canStillBeRemovedExplicitly() {
        RecordIndex index = index(DISK_MODE);
        invariants.expectAllReleased();
        insert(index, 1, null, 2, true, 10);
        index.pin(key(1));

        assertEquals(1L, index.remove(key(1)).key().hash());
    }

    // --- clean / parked -----------------------------------------------------------------------------------------

    @Test
    void parkedRecord_inDiskMode_isNotDroppable() {
        RecordIndex index = index(DISK_MODE);
        insert(index, 1, null, 3, false, 10);

        assertNull(index.dropColdest());
        assertEquals(3, index.parkedSlots());
        assertEquals(0, index.droppableSlots());
        assertEquals(1, index.coldestParked(5).size());
    }

    @Test
    void markDurable_makesAParkedRecordDroppableInDiskMode() {
        RecordIndex index = index(DISK_MODE);
        invariants.expectAllReleased();
        insert(index, 1, null, 3, false, 10);

        index.markDurable(key(1));

        assertTrue(index.get(key(1)).durable());
        assertEquals(0, index.parkedSlots());
        assertEquals(3, index.droppableSlots());
        assertTrue(index.coldestParked(5).isEmpty());
        assertEquals(1L, index.dropColdest().key().hash());
    }

    @Test
    void markDurable_ofAPinnedRecord_makesItDroppableOnlyAfterUnpin() {
        RecordIndex index = index(DISK_MODE);
        invariants.expectAllReleased();
        insert(index, 1, null, 3, false, 10);
        index.pin(key(1));

        index.markDurable(key(1));
        assertEquals(0, index.droppableSlots());
        assertEquals(0, index.parkedSlots());

        index.unpin(key(1));
        assertEquals(3, index.droppableSlots());
        assertEquals(1L, index.dropColdest().key().hash());
    }

    @Test
    void markDurable_ofAParentInDiskMode_makesItDroppableDespiteResidentChildren() {
        RecordIndex index = index(DISK_MODE);
        insert(index, 1, null, 3, false, 10);
        insert(index, 2, 1L, 3, false, 20);

        index.markDurable(key(1));

        assertEquals(1L, index.dropColdest().key().hash(), "its durable copy keeps the chain reachable");
        assertEquals(3, index.parkedSlots());
    }

    @Test
    void coldestParked_listsColdestFirstUpToMaxWithoutChangingAnything() {
        RecordIndex index = index(DISK_MODE);
        for (long k = 1; k <= 5; k++) {
            insert(index, k, null, 1, false, k * 10);
        }

        List<RecordIndex.Entry> two = index.coldestParked(2);

        assertEquals(List.of(1L, 2L), two.stream().map(e -> e.key().hash()).toList());
        assertEquals(5, index.coldestParked(100).size());
        assertEquals(5, index.size());
        assertEquals(5, index.parkedSlots());
    }

    @Test
    void slotTotals_addUpAcrossDroppableParkedAndPinned() {
        RecordIndex index = index(DISK_MODE);
        insert(index, 1, null, 5, true, 10);    // droppable
        insert(index, 2, null, 3, false, 20);   // parked
        insert(index, 3, null, 2, true, 30);    // pinned: neither list
        index.pin(key(3));
        insert(index, 4, null, 7, false, 40);   // parked

        assertAll(
                () -> assertEquals(5, index.droppableSlots()),
                () -> assertEquals(10, index.parkedSlots()),
                () -> assertEquals(17, index.residentSlots()),
                () -> assertEquals(4, index.size()));

        index.remove(key(2));
        assertEquals(7, index.parkedSlots());
        assertEquals(14, index.residentSlots());
    }

    @Test
    void slotTotals_inMemoryOnlyMode_countLeavesAsDroppable() {
        RecordIndex index = index(MEMORY_ONLY);
        insert(index, 1, null, 5, false, 10);
        insert(index, 2, 1L, 3, false, 20);
        insert(index, 3, 1L, 2, false, 30);
        insert(index, 4, null, 7, false, 40);

        assertEquals(12, index.droppableSlots(), "leaves 2, 3 and 4");
        assertEquals(0, index.parkedSlots());
        assertEquals(17, index.residentSlots());
    }

    // --- children before parents ------------------------------------------------------------------------------

    @Test
    void childArrivingBeforeItsParent_isCountedWhenTheParentArrives() {
        RecordIndex index = index(MEMORY_ONLY);
        invariants.expectAllReleased();
        insert(index, 2, 1L, 1, false, 10);
        insert(index, 3, 1L, 1, false, 20);

        RecordIndex.Entry parent = insert(index, 1, null, 1, false, 30);

        assertEquals(2, parent.residentChildren());
        assertEquals(List.of(2L, 3L, 1L), dropAll(index), "the parent stays until both children have gone");
    }

    @Test
    void childThatLeavesBeforeItsParentArrives_isNotCounted() {
        RecordIndex index = index(MEMORY_ONLY);
        invariants.expectAllReleased();
        insert(index, 2, 1L, 1, false, 10);
        index.remove(key(2));

        RecordIndex.Entry parent = insert(index, 1, null, 1, false, 30);

        assertEquals(0, parent.residentChildren());
        assertEquals(1, index.droppableSlots());
        index.remove(key(1));
    }

    @Test
    void parentRemovedAndReinserted_countsItsChildrenStillResident() {
        RecordIndex index = index(DISK_MODE);
        invariants.expectAllReleased();
        insert(index, 1, null, 1, true, 10);
        insert(index, 2, 1L, 1, false, 20);
        insert(index, 3, 1L, 1, false, 30);
        index.dropColdest(); // the durable parent leaves; its parked children stay
        index.remove(key(3));

        RecordIndex.Entry back = insert(index, 1, null, 1, true, 40);

        assertEquals(1, back.residentChildren());
        index.remove(key(2));
        assertEquals(0, index.get(key(1)).residentChildren());
        index.remove(key(1));
    }

    // --- insert / remove ----------------------------------------------------------------------------------------

    @Test
    void insert_ofAResidentKey_isRejected() {
        RecordIndex index = index(DISK_MODE);
        insert(index, 1, null, 1, true, 10);

        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> insert(index, 1, null, 1, true, 20));

        assertTrue(e.getMessage().contains("already resident"), e.getMessage());
        assertEquals(1, index.size());
        assertEquals(1, index.residentSlots());
    }

    @Test
    void insert_recordsSpecSlotsStateAndTime() {
        RecordIndex index = index(DISK_MODE);
        SlotList s = SlotList.of(7, 8, 9);
        RecordSpec spec = new RecordSpec(key(1), null, false);

        RecordIndex.Entry e = index.insert(spec, s, false, 123);

        assertAll(
                () -> assertSame(spec, e.spec()),
                () -> assertEquals(key(1), e.key()),
                () -> assertEquals(s, e.slots()),
                () -> assertEquals(123, e.lastUseNanos()),
                () -> assertFalse(e.durable()),
                () -> assertEquals(0, e.pins()),
                () -> assertSame(e, index.get(key(1))));
    }

    @Test
    void remove_ofAnAbsentKey_returnsNull() {
        RecordIndex index = index(DISK_MODE);
        invariants.expectAllReleased();

        assertNull(index.remove(key(1)));
    }
}
