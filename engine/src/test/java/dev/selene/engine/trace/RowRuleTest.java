package dev.selene.engine.trace;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which blocks of a request each row rule publishes, and which carry a row. */
class RowRuleTest {

    /** 1300 tokens: two full blocks and a partial third. */
    private static final TraceRequest PARTIAL = new TraceRequest(0, 1300, 10, new long[] {1, 2, 3});
    /** 1024 tokens: two full blocks. */
    private static final TraceRequest EXACT = new TraceRequest(0, 1024, 10, new long[] {1, 2});

    @Test
    void lastFull_publishesTheFullBlocks_withARowAtTheLastOfThem() {
        RowRule rule = RowRule.parse("last-full", 0);
        assertEquals(2, rule.published(PARTIAL));
        assertFalse(rule.hasRow(PARTIAL, 0));
        assertTrue(rule.hasRow(PARTIAL, 1));
        assertEquals(2, rule.published(EXACT));
        assertTrue(rule.hasRow(EXACT, 1));
        assertEquals(0, rule.published(new TraceRequest(0, 300, 1, new long[] {9})), "no full block, nothing");
    }

    @Test
    void last_publishesEveryBlock_withARowAtTheVeryLast() {
        RowRule rule = RowRule.parse("last", 0);
        assertEquals(3, rule.published(PARTIAL));
        assertFalse(rule.hasRow(PARTIAL, 1));
        assertTrue(rule.hasRow(PARTIAL, 2));
    }

    @Test
    void every_andAnInterval_addRows() {
        RowRule every = RowRule.parse("every", 0);
        for (int i = 0; i < 3; i++) {
            assertTrue(every.hasRow(PARTIAL, i));
        }
        RowRule interval = RowRule.parse("last-full", 1);
        assertTrue(interval.hasRow(PARTIAL, 0));
        assertEquals("last-full, every 1", interval.label());
    }

    @Test
    void anUnknownRule_orANegativeInterval_isRefusedNamingTheAllowedValues() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RowRule.parse("first", 0));
        assertTrue(e.getMessage().contains("last-full, last, every"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RowRule.parse("last", -1));
    }
}
