package dev.selene.transport.gpu;

import dev.selene.engine.key.RecordKey;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class KeyedContentTest {

    @Test
    void seed_differsByNamespaceHashRankAndPiece() {
        long seed = KeyedContent.seed(new RecordKey("a", 1), 0, 0);

        assertEquals(seed, KeyedContent.seed(new RecordKey("a", 1), 0, 0));
        assertNotEquals(seed, KeyedContent.seed(new RecordKey("b", 1), 0, 0));
        assertNotEquals(seed, KeyedContent.seed(new RecordKey("a", 2), 0, 0));
        assertNotEquals(seed, KeyedContent.seed(new RecordKey("a", 1), 1, 0));
        assertNotEquals(seed, KeyedContent.seed(new RecordKey("a", 1), 0, 1));
    }

    @Test
    void firstMismatch_isMinusOneForFilledBytes_andFindsTheExactChangedByteIncludingTheTail() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(1003);
            KeyedContent.fill(seg, 42);
            assertEquals(-1, KeyedContent.firstMismatch(seg, 42));

            for (long offset : new long[] {0, 7, 8, 517, 1000, 1002}) {
                byte original = seg.get(ValueLayout.JAVA_BYTE, offset);
                seg.set(ValueLayout.JAVA_BYTE, offset, (byte) ~original);
                assertEquals(offset, KeyedContent.firstMismatch(seg, 42), "changed byte " + offset);
                seg.set(ValueLayout.JAVA_BYTE, offset, original);
            }
            assertEquals(0, KeyedContent.firstMismatch(seg, 43));
        }
    }

    @Test
    void fill_ofASlice_matchesTheSamePrefixOfALongerFill() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment longer = arena.allocate(4096);
            MemorySegment shorter = arena.allocate(100);
            KeyedContent.fill(longer, 5);
            KeyedContent.fill(shorter, 5);

            assertEquals(-1, shorter.mismatch(longer.asSlice(0, 100)));
        }
    }
}
