package dev.selene.engine.key;

import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordSpecTest {

    @Test
    void slots_ofARecordWithARow_arePagesPlusRowPieces() {
        RecordSpec withRow = new RecordSpec(new RecordKey("ns", 1), null, true);
        RecordSpec pageOnly = new RecordSpec(new RecordKey("ns", 2), null, false);

        assertEquals(31, withRow.slots(Layout.deepseekTp4()));
        assertEquals(8, pageOnly.slots(Layout.deepseekTp4()));
        assertEquals(167, withRow.slots(Layout.qwenTp1()));
        assertEquals(5, withRow.slots(Layout.small()));
    }

    @Test
    void isRoot_whenThereIsNoParent() {
        RecordKey root = new RecordKey("ns", 1);

        assertTrue(new RecordSpec(root, null, true).isRoot());
        assertFalse(new RecordSpec(root.child(2), root, true).isRoot());
    }

    @Test
    void constructor_withoutAKey_isRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RecordSpec(null, null, true));

        assertEquals("key is required", e.getMessage());
    }

    @Test
    void constructor_withAParentInAnotherNamespace_namesBoth() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RecordSpec(new RecordKey("a", 2), new RecordKey("b", 1), true));

        assertEquals("parent b/0000000000000001 is in another namespace than a/0000000000000002", e.getMessage());
    }
}
