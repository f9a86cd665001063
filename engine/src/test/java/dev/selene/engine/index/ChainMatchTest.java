package dev.selene.engine.index;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ChainMatchTest {

    private static final boolean ROW = true;
    private static final boolean PAGES = false;

    /** The match depth of a fully present chain whose records have (or lack) rows as given, root first. */
    private static int depth(boolean... hasRow) {
        return ChainMatch.depth(hasRow.length, i -> true, i -> hasRow[i]);
    }

    private static int depth(boolean[] present, boolean[] hasRow) {
        return ChainMatch.depth(present.length, i -> present[i], i -> hasRow[i]);
    }

    @Test
    void depth_ofAChainWithRowsEverywhere_isItsLength() {
        assertEquals(3, depth(ROW, ROW, ROW));
    }

    @Test
    void depth_pageOnlyRecordsSupplyPagesToTheRowThatEndsTheMatch() {
        assertEquals(3, depth(PAGES, PAGES, ROW));
    }

    @Test
    void depth_aPageOnlyRecordNeverEndsAMatch() {
        assertEquals(1, depth(ROW, PAGES));
        assertEquals(2, depth(ROW, ROW, PAGES, PAGES));
    }

    @Test
    void depth_ofAPageOnlyChain_isNoMatch() {
        assertEquals(0, depth(PAGES));
        assertEquals(0, depth(PAGES, PAGES, PAGES));
    }

    @Test
    void depth_ofAnEmptyChain_isNoMatch() {
        assertEquals(0, depth());
    }

    @Test
    void depth_stopsAtTheFirstAbsentRecord() {
        boolean[] present = {true, true, false, true, true};
        boolean[] rows = {true, true, true, true, true};

        assertEquals(2, depth(present, rows), "records after a gap are unreachable even when present");
    }

    @Test
    void depth_whenTheRootIsAbsent_isNoMatch() {
        assertEquals(0, depth(new boolean[] {false, true}, new boolean[] {true, true}));
    }

    @Test
    void depth_aGapAfterPageOnlyRecords_fallsBackToTheLastRowBeforeIt() {
        boolean[] present = {true, true, true, false, true};
        boolean[] rows = {true, false, false, true, true};

        assertEquals(1, depth(present, rows));
    }

    @Test
    void depth_neverAsksAboutRecordsPastTheFirstAbsentOne() {
        int[] asked = new int[1];
        int d = ChainMatch.depth(10, i -> {
            asked[0] = Math.max(asked[0], i);
            return i < 4;
        }, i -> true);

        assertEquals(4, d);
        assertEquals(4, asked[0], "the walk stops at index 4, the first absent record");
    }
}
