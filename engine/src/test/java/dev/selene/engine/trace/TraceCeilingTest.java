package dev.selene.engine.trace;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The unbounded ceilings of a trace, exactly. */
class TraceCeilingTest {

    private static TraceRequest req(int input, long... ids) {
        return new TraceRequest(0, input, 1, ids);
    }

    @Test
    void ceiling_countsRepeatedBlocks_andTheRowAwareMatch() {
        List<TraceRequest> trace = List.of(req(1536, 1, 2, 3), req(2048, 1, 2, 3, 4), req(1024, 1, 2), req(512, 9));
        TraceCeiling c = TraceCeiling.of(trace, RowRule.parse("last", 0));
        assertEquals(10, c.blockReferences());
        assertEquals(5, c.distinctBlocks());
        assertEquals(0.5, c.blockCeiling(), 1e-9);
        // Seen prefixes: 0, 3 blocks (1536 tokens), 2 blocks (1024), 0 of 5120 requested tokens.
        assertEquals((1536 + 1024) / 5120.0, c.tokenCeiling(), 1e-9);
        // Rows at last blocks only: the second request matches up to block 3 (a row), the third matches nothing.
        assertEquals(1536 / 5120.0, c.rowCeiling(), 1e-9);
        assertEquals((1536 + 1024) / 5120.0, TraceCeiling.of(trace, RowRule.parse("last", 1)).rowCeiling(), 1e-9);
    }

    @Test
    void aConversation_resumesAtTheLastFullBlock_butNeverAtAPartialOne() {
        // Turn 1 ends inside block 3 (id 30); turn 2 holds block 3 full (id 31, hashed differently) and more.
        List<TraceRequest> turns = List.of(req(1300, 10, 20, 30), req(2100, 10, 20, 31, 40, 50));
        assertEquals(0, TraceCeiling.of(turns, RowRule.parse("last", 0)).rowCeiling(), 1e-9);
        assertEquals(1024 / 3400.0, TraceCeiling.of(turns, RowRule.LAST_FULL).rowCeiling(), 1e-9);
    }

    @Test
    void onGeneratedConversations_lastFullRows_reachMoreThanLastRows() {
        for (String shape : TraceShapes.NAMES) {
            List<TraceRequest> trace = TraceShapes.generate(shape, 3, 400);
            double lastFull = TraceCeiling.of(trace, RowRule.LAST_FULL).rowCeiling();
            double last = TraceCeiling.of(trace, RowRule.parse("last", 0)).rowCeiling();
            assertTrue(lastFull > last + 0.05, shape + ": last-full " + lastFull + " vs last " + last);
            assertTrue(lastFull <= TraceCeiling.of(trace, RowRule.LAST_FULL).tokenCeiling() + 1e-12, shape);
        }
    }
}
