package dev.selene.engine.invariants;

import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotList;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The invariant extension itself: it must catch what it claims to catch. */
class EngineInvariantsTest {

    @Test
    void verify_whenTestReleasedEverything_passes() {
        EngineInvariants invariants = new EngineInvariants();
        SlotAccounting pool = invariants.track(new SlotAccounting(10, 2));
        pool.release(pool.allocate(4));
        invariants.expectAllReleased();

        assertDoesNotThrow(invariants::verify);
    }

    @Test
    void verify_whenASlotLeaked_failsNamingTheLeak() {
        EngineInvariants invariants = new EngineInvariants();
        SlotAccounting pool = invariants.track(new SlotAccounting(10, 2));
        pool.allocate(3);
        invariants.expectAllReleased();

        AssertionError e = assertThrows(AssertionError.class, invariants::verify);
        assertTrue(e.getMessage().contains("slot leak: 7 of 10"), e.getMessage());
    }

    @Test
    void verify_whenARecordIsStillResident_failsNamingTheLeak() {
        EngineInvariants invariants = new EngineInvariants();
        RecordIndex index = invariants.track(new RecordIndex(false));
        index.insert(new RecordSpec(new RecordKey("ns", 1), null, true), SlotList.of(1, 2), false, 0);
        invariants.expectAllReleased();

        AssertionError e = assertThrows(AssertionError.class, invariants::verify);
        assertTrue(e.getMessage().contains("record leak: 1 records"), e.getMessage());
    }

    @Test
    void verify_whenLeftoversAreExpected_onlyChecksInvariants() {
        EngineInvariants invariants = new EngineInvariants();
        SlotAccounting pool = invariants.track(new SlotAccounting(10, 2));
        pool.allocate(3);

        assertDoesNotThrow(invariants::verify);
    }

    @Test
    void verify_whenPoolCleanDisagreesWithIndex_fails() {
        EngineInvariants invariants = new EngineInvariants();
        SlotAccounting pool = new SlotAccounting(10, 2);
        RecordIndex index = new RecordIndex(false);
        invariants.trackPair(pool, index);
        SlotList slots = pool.allocate(2);
        index.insert(new RecordSpec(new RecordKey("ns", 1), null, false), slots, true, 0);

        AssertionError e = assertThrows(AssertionError.class, invariants::verify);
        assertTrue(e.getMessage().contains("pool counts 0 clean slots, index has 2 droppable"), e.getMessage());

        pool.addClean(2);
        assertDoesNotThrow(invariants::verify);
    }

    @Test
    void verify_whenPoolUsesSlotsNoRecordHolds_fails() {
        EngineInvariants invariants = new EngineInvariants();
        SlotAccounting pool = new SlotAccounting(10, 2);
        RecordIndex index = new RecordIndex(true);
        invariants.trackPair(pool, index);
        pool.allocate(1);

        AssertionError e = assertThrows(AssertionError.class, invariants::verify);
        assertTrue(e.getMessage().contains("1 slots in use, index holds 0"), e.getMessage());
    }
}
