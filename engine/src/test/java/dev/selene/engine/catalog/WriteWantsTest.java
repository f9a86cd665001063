package dev.selene.engine.catalog;

import dev.selene.engine.key.RecordKey;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WriteWantsTest {

    private static RecordKey key(long h) {
        return new RecordKey("ns", h);
    }

    @Test
    void aRecordSetAsideForAWrite_isNotActiveUntilItEnds_thenComesBackInItsFirstPlace() {
        WriteWants wants = new WriteWants();
        wants.add(key(1));
        wants.add(key(2));
        wants.add(key(3));
        wants.await(key(1), key(9));
        wants.await(key(2), key(9));

        assertEquals(List.of(key(3)), wants.active());
        assertTrue(wants.contains(key(1)), "set aside, it still wants a write");
        wants.add(key(1));
        assertEquals(List.of(key(3)), wants.active(), "asking again does not bring it back early");

        wants.writeEnded(key(9));

        assertEquals(List.of(key(1), key(2), key(3)), wants.active(), "the order they first asked in");
        wants.checkInvariants(k -> false);
    }

    @Test
    void aRecordThatLeavesWhileSetAside_isGone_andTheWriteEndingBringsNothingBack() {
        WriteWants wants = new WriteWants();
        wants.await(key(1), key(9)); // never asked before: it wants a write from now on
        wants.await(key(2), key(9));

        wants.remove(key(1));
        wants.checkInvariants(k -> k.equals(key(9)));
        wants.writeEnded(key(9));

        assertFalse(wants.contains(key(1)));
        assertEquals(List.of(key(2)), wants.active());
    }

    @Test
    void aRecordSetAsideForOneWrite_cannotWaitForAnother() {
        WriteWants wants = new WriteWants();
        wants.await(key(1), key(9));
        wants.await(key(1), key(9)); // the same write again: nothing changes

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> wants.await(key(1), key(8)));
        assertTrue(e.getMessage().contains("already waits for the write of " + key(9)), e.getMessage());
        wants.checkInvariants(k -> k.equals(key(9)));
    }

    @Test
    void checkInvariants_namesAWaitForAWriteNotInFlight() {
        WriteWants wants = new WriteWants();
        wants.await(key(1), key(9));

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> wants.checkInvariants(k -> false));
        assertTrue(e.getMessage().contains("wait for a write of " + key(9)), e.getMessage());
    }
}
