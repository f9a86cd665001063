package dev.selene.engine.slots;

import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.invariants.EngineInvariants;
import dev.selene.engine.invariants.IndexedPool;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SlotAccountingTest {

    @RegisterExtension
    final EngineInvariants invariants = new EngineInvariants();

    private SlotAccounting pool(int total, int intake) {
        return invariants.track(new SlotAccounting(total, intake));
    }

    private static Set<Integer> distinct(SlotList list) {
        Set<Integer> set = new HashSet<>();
        for (int i = 0; i < list.count(); i++) {
            set.add(list.slot(i));
        }
        return set;
    }

    // --- allocate / release -------------------------------------------------------------------------------------

    @Test
    void new_pool_hasEverySlotFreeAndNothingClean() {
        SlotAccounting pool = pool(100, 20);
        invariants.expectAllReleased();

        assertAll(
                () -> assertEquals(100, pool.total()),
                () -> assertEquals(20, pool.intake()),
                () -> assertEquals(100, pool.free()),
                () -> assertEquals(0, pool.inUse()),
                () -> assertEquals(0, pool.clean()));
    }

    @Test
    void allocateThenRelease_returnsEverySlot() {
        SlotAccounting pool = pool(100, 20);
        invariants.expectAllReleased();

        SlotList a = pool.allocate(8);
        SlotList b = pool.allocate(31);

        assertEquals(8, a.count());
        assertEquals(31, b.count());
        assertEquals(61, pool.free());
        assertEquals(39, pool.inUse());
        Set<Integer> all = distinct(a);
        all.addAll(distinct(b));
        assertEquals(39, all.size(), "no slot is handed out twice");
        assertTrue(all.stream().allMatch(s -> s >= 0 && s < 100), "every slot is in 0..total-1");

        pool.release(a);
        assertEquals(69, pool.free());
        pool.release(b);
        assertEquals(100, pool.free());
    }

    @Test
    void allocate_aRecordWithARowUnderSmallLayout_takesPagesPlusRowPiecesInOneCall() {
        Layout small = Layout.small();
        SlotAccounting pool = pool(64, 8);
        invariants.expectAllReleased();
        int rowPieces = (int) Math.ceil((double) small.rowBytes() / small.pageBytes());
        RecordSpec withRow = new RecordSpec(new RecordKey("ns", 1), null, true);
        RecordSpec pageOnly = new RecordSpec(new RecordKey("ns", 2), null, false);

        SlotList row = pool.allocate(withRow.slots(small));
        SlotList pages = pool.allocate(pageOnly.slots(small));

        assertEquals(3, rowPieces, "small's row of 2 pages + 100 bytes needs a third, partly used piece");
        assertEquals(small.rowPieces(), rowPieces);
        assertEquals(small.pagesPerRecord() + rowPieces, row.count());
        assertEquals(small.pagesPerRecord(), pages.count());
        assertEquals(row.count(), distinct(row).size());
        assertEquals(64 - row.count() - pages.count(), pool.free());

        pool.release(row);
        pool.release(pages);
    }

    @Test
    void allocate_afterRelease_reusesTheMostRecentlyFreedSlotsFirst() {
        SlotAccounting pool = pool(100, 10);
        invariants.expectAllReleased();
        SlotList first = pool.allocate(5);
        pool.release(first);

        SlotList again = pool.allocate(5);

        assertEquals(distinct(first), distinct(again));
        pool.release(again);
    }

    @Test
    void allocate_zeroSlots_isAnEmptyList() {
        SlotAccounting pool = pool(10, 2);
        invariants.expectAllReleased();

        SlotList none = pool.allocate(0);

        assertEquals(0, none.count());
        assertEquals(10, pool.free());
        pool.release(none);
        assertEquals(10, pool.free());
    }

    @Test
    void allocate_moreThanFree_isRejectedWithoutTakingAnything() {
        SlotAccounting pool = pool(10, 2);
        SlotList held = pool.allocate(7);

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.allocate(4));

        assertTrue(e.getMessage().contains("allocate 4 with only 3 free"), e.getMessage());
        assertEquals(3, pool.free());
        pool.release(held);
    }

    @Test
    void allocate_everySlot_thenNothingIsFree() {
        SlotAccounting pool = pool(16, 4);
        invariants.expectAllReleased();

        SlotList all = pool.allocate(16);

        assertEquals(0, pool.free());
        assertEquals(16, distinct(all).size());
        pool.release(all);
    }

    @Test
    void release_twice_isRejectedAndLeavesTheCountsAlone() {
        SlotAccounting pool = pool(20, 4);
        invariants.expectAllReleased();
        SlotList a = pool.allocate(6);
        pool.release(a);

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.release(a));

        assertTrue(e.getMessage().contains("not in use"), e.getMessage());
        assertEquals(20, pool.free());
    }

    @Test
    void release_ofAListWithOneStaleSlot_releasesNothing() {
        SlotAccounting pool = pool(20, 4);
        invariants.expectAllReleased();
        SlotList a = pool.allocate(3);
        SlotList b = pool.allocate(3);
        pool.release(a);
        int[] mixed = {b.slot(0), b.slot(1), a.slot(0)};

        assertThrows(IllegalStateException.class, () -> pool.release(SlotList.of(mixed)));

        assertEquals(17, pool.free(), "the valid slots of the rejected list stay in use");
        pool.release(b);
    }

    @Test
    void release_ofASlotOutsideThePool_isRejected() {
        SlotAccounting pool = pool(10, 2);
        invariants.expectAllReleased();

        assertThrows(IllegalStateException.class, () -> pool.release(SlotList.of(10)));
        assertThrows(IllegalStateException.class, () -> pool.release(SlotList.of(-1)));
        assertEquals(10, pool.free());
    }

    @Test
    void release_ofAListNamingTheSameSlotTwice_isRejectedAndLeavesTheCountsAlone() {
        // A list that names one in-use slot twice passes the "in use" check slot by slot, and then pushes the
        // slot onto the free stack twice: free overcounts and the next allocations hand the slot out twice.
        SlotAccounting pool = pool(10, 2);
        SlotList held = pool.allocate(2);
        int s = held.slot(0);

        assertThrows(IllegalStateException.class, () -> pool.release(SlotList.of(s, s)));

        assertEquals(8, pool.free(), "a rejected release changes nothing");
        pool.release(held);
        assertEquals(10, pool.free());
    }

    // --- clean counting -----------------------------------------------------------------------------------------

    @Test
    void addClean_andRemoveClean_countCleanSlots() {
        SlotAccounting pool = pool(50, 10);
        invariants.expectAllReleased();
        SlotList a = pool.allocate(20);

        pool.addClean(12);
        assertEquals(12, pool.clean());
        pool.removeClean(5);
        assertEquals(7, pool.clean());

        pool.removeClean(7);
        pool.release(a);
    }

    @Test
    void addClean_beyondTheSlotsInUse_isRejected() {
        SlotAccounting pool = pool(50, 10);
        SlotList a = pool.allocate(5);

        assertThrows(IllegalStateException.class, () -> pool.addClean(6));
        assertThrows(IllegalStateException.class, () -> pool.addClean(-1));
        assertEquals(0, pool.clean());
        pool.release(a);
    }

    @Test
    void removeClean_belowZero_isRejected() {
        SlotAccounting pool = pool(50, 10);
        SlotList a = pool.allocate(5);
        pool.addClean(3);

        assertThrows(IllegalStateException.class, () -> pool.removeClean(4));
        assertThrows(IllegalStateException.class, () -> pool.removeClean(-1));
        assertEquals(3, pool.clean());
        pool.removeClean(3);
        pool.release(a);
    }

    // --- intake floor (B3) --------------------------------------------------------------------------------------

    @Test
    void evictionWanted_whenTheAllocationLeavesTheIntakeFree_isZero() {
        SlotAccounting pool = pool(100, 20);
        SlotList held = pool.allocate(50);
        pool.addClean(50);

        assertEquals(0, pool.evictionWanted(30), "50 free - 30 = 20 = the intake");
        assertEquals(0, pool.evictionWanted(0));
        pool.removeClean(50);
        pool.release(held);
    }

    @Test
    void evictionWanted_whenTheAllocationWouldEatIntoTheIntake_wantsTheDifferenceInCleanSlots() {
        SlotAccounting pool = pool(100, 20);
        SlotList held = pool.allocate(70);
        pool.addClean(40);

        assertEquals(5, pool.evictionWanted(15), "30 free - 15 leaves 15 of a 20-slot intake");
        assertEquals(20, pool.evictionWanted(30));
        pool.removeClean(40);
        pool.release(held);
    }

    @Test
    void evictionWanted_isCappedAtTheCleanSlots() {
        SlotAccounting pool = pool(100, 20);
        SlotList held = pool.allocate(90);
        pool.addClean(7);

        assertEquals(7, pool.evictionWanted(10));
        pool.removeClean(7);
        assertEquals(0, pool.evictionWanted(10), "nothing clean: nothing to evict, the publication uses the intake");
        pool.release(held);
    }

    @Test
    void allocate_whenIntakeWouldShrink_wantsColdestCleanEvicted() {
        SlotAccounting pool = new SlotAccounting(40, 10);
        RecordIndex index = new RecordIndex(false);
        invariants.trackPair(pool, index);
        invariants.expectAllReleased();
        Layout layout = new Layout("ten", 1, 4096, 0, 10, 16);
        IndexedPool tier = new IndexedPool(layout, pool, index);
        RecordKey cold = new RecordKey("ns", 1);
        RecordKey warm = new RecordKey("ns", 2);
        RecordKey hot = new RecordKey("ns", 3);
        tier.publish(new RecordSpec(cold, null, false), true, 1);
        tier.publish(new RecordSpec(warm, null, false), true, 2);
        tier.publish(new RecordSpec(hot, null, false), true, 3);
        assertEquals(10, pool.free());
        assertEquals(30, pool.clean());

        int wanted = pool.evictionWanted(10);
        assertEquals(10, wanted, "allocating 10 with 10 free would leave no intake");
        assertEquals(0, pool.shortBy(10, Purpose.PUBLISH), "a publication could take the intake itself");
        assertEquals(10, tier.evict(wanted));

        assertFalse(index.contains(cold), "the coldest clean record goes first");
        assertTrue(index.contains(warm));
        assertTrue(index.contains(hot));
        SlotList fresh = pool.allocate(10);
        assertEquals(pool.intake(), pool.free(), "the intake is still free after the allocation");
        pool.release(fresh);
        tier.removeAll();
    }

    @Test
    void shortBy_forStaging_keepsTheIntakeFreeButPublishMayUseIt() {
        SlotAccounting pool = pool(100, 20);
        SlotList held = pool.allocate(70);

        assertEquals(0, pool.shortBy(20, Purpose.STAGING), "30 free - 20 = 10 = half the intake");
        assertEquals(5, pool.shortBy(25, Purpose.STAGING));
        assertEquals(0, pool.shortBy(15, Purpose.PUBLISH));
        assertEquals(0, pool.shortBy(30, Purpose.PUBLISH));
        assertEquals(1, pool.shortBy(31, Purpose.PUBLISH));
        pool.release(held);
    }

    @Test
    void shortBy_staticAndInstance_agree() {
        SlotAccounting pool = pool(100, 20);
        SlotList held = pool.allocate(64);

        for (Purpose p : Purpose.values()) {
            for (int slots = 0; slots <= 110; slots++) {
                assertEquals(SlotAccounting.shortBy(slots, pool.free(), 20, p), pool.shortBy(slots, p));
                assertEquals(SlotAccounting.fits(slots, 100, 20, p), pool.fits(slots, p));
            }
        }
        pool.release(held);
    }

    // --- Oversize (B5) ------------------------------------------------------------------------------------------

    @Test
    void fits_aRecordLargerThanTheWholePool_neverFits() {
        SlotAccounting pool = pool(100, 20);

        assertFalse(pool.fits(101, Purpose.PUBLISH));
        assertFalse(pool.fits(101, Purpose.STAGING));
        assertTrue(pool.shortBy(101, Purpose.PUBLISH) > 0, "even an empty pool is short: Oversize, not Retry");
    }

    @Test
    void fits_forStaging_isCappedByTheIntake() {
        assertTrue(SlotAccounting.fits(90, 100, 20, Purpose.STAGING));
        assertFalse(SlotAccounting.fits(91, 100, 20, Purpose.STAGING));
        assertTrue(SlotAccounting.fits(81, 100, 20, Purpose.PUBLISH));
        assertTrue(SlotAccounting.fits(100, 100, 20, Purpose.PUBLISH));
        assertEquals(90, SlotAccounting.maxGrant(100, 20, Purpose.STAGING));
        assertEquals(100, SlotAccounting.maxGrant(100, 20, Purpose.PUBLISH));
    }

    @Test
    void fits_negativeSlots_neverFits() {
        assertFalse(SlotAccounting.fits(-1, 100, 20, Purpose.PUBLISH));
    }

    @ParameterizedTest
    @EnumSource(Purpose.class)
    void fitsAndShortBy_onAnEmptyPool_agreeForEverySize(Purpose purpose) {
        // B5: a record that fits is never short on an empty pool (it can always go eventually), and one that
        // does not fit is always short (so the caller must answer Oversize, not Retry forever).
        for (int total = 1; total <= 40; total++) {
            for (int intake = 0; intake <= total; intake++) {
                for (int slots = 0; slots <= total + 3; slots++) {
                    boolean fits = SlotAccounting.fits(slots, total, intake, purpose);
                    int shortOnEmpty = SlotAccounting.shortBy(slots, total, intake, purpose);
                    assertEquals(fits, shortOnEmpty == 0,
                            "slots=" + slots + " total=" + total + " intake=" + intake + " " + purpose);
                    assertEquals(fits, slots <= SlotAccounting.maxGrant(total, intake, purpose));
                }
            }
        }
    }

    // --- pressure (B4) ------------------------------------------------------------------------------------------

    @Test
    void pressureDeficit_whenFreePlusCleanFallsBelowTwoIntakes_isTheShortfall() {
        SlotAccounting pool = pool(100, 20);
        assertEquals(0, pool.pressureDeficit());

        SlotList held = pool.allocate(60);
        assertEquals(0, pool.pressureDeficit(), "40 free = two intakes");
        SlotList more = pool.allocate(10);
        assertEquals(10, pool.pressureDeficit(), "30 free, nothing clean");
        pool.addClean(4);
        assertEquals(6, pool.pressureDeficit(), "clean slots count as room");
        pool.addClean(6);
        assertEquals(0, pool.pressureDeficit());
        pool.addClean(20);
        assertEquals(0, pool.pressureDeficit(), "never negative");

        pool.removeClean(30);
        pool.release(more);
        pool.release(held);
    }

    @Test
    void pressureDeficit_withNoIntake_isZero() {
        SlotAccounting pool = pool(10, 0);
        SlotList all = pool.allocate(10);

        assertEquals(0, pool.pressureDeficit());
        pool.release(all);
    }

    // --- construction and invariants ---------------------------------------------------------------------------

    @Test
    void constructor_rejectsAnEmptyPoolOrAnIntakeOutsideIt() {
        IllegalArgumentException noSlots = assertThrows(IllegalArgumentException.class,
                () -> new SlotAccounting(0, 0));
        IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
                () -> new SlotAccounting(10, 11));
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> new SlotAccounting(10, -1));

        assertTrue(noSlots.getMessage().contains("total slots"), noSlots.getMessage());
        assertTrue(big.getMessage().contains("intake slots must be in 0..10, was 11"), big.getMessage());
        assertTrue(negative.getMessage().contains("was -1"), negative.getMessage());
    }

    @Test
    void checkInvariants_whenCleanOutlivesTheSlotsItCounted_namesTheImbalance() {
        SlotAccounting pool = new SlotAccounting(10, 2);
        SlotList a = pool.allocate(4);
        pool.addClean(4);
        pool.release(a); // a caller that forgets removeClean before releasing clean slots

        IllegalStateException e = assertThrows(IllegalStateException.class, pool::checkInvariants);

        assertTrue(e.getMessage().contains("clean 4 outside 0..0"), e.getMessage());
    }

    @Test
    void slotList_of_copiesItsInputAndComparesByContent() {
        int[] raw = {3, 1, 2};
        SlotList list = SlotList.of(raw);
        raw[0] = 99;

        assertEquals(3, list.slot(0));
        assertArrayEquals(new int[] {3, 1, 2}, list.toArray());
        assertEquals(SlotList.of(3, 1, 2), list);
        assertEquals(SlotList.of(3, 1, 2).hashCode(), list.hashCode());
        assertNotNull(list.toString());
        int[] copy = list.toArray();
        copy[1] = 42;
        assertEquals(1, list.slot(1), "toArray hands out a copy");
        assertEquals("[3, 1, 2]", list.toString());
        assertTrue(SlotList.of(new int[20]).toString().startsWith("20 slots"));
    }
}
