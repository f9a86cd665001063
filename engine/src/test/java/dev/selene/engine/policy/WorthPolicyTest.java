package dev.selene.engine.policy;

import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotList;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The worth policy's score and order over a memory-only index: what it drops first and what it keeps. */
class WorthPolicyTest {

    private int nextSlot;

    private static RecordKey key(long hash) {
        return new RecordKey("ns", hash);
    }

    private RecordIndex.Entry insert(RecordIndex index, long hash, Long parent, boolean row) {
        int slots = row ? 5 : 1;
        int[] s = new int[slots];
        for (int i = 0; i < slots; i++) {
            s[i] = nextSlot++;
        }
        RecordIndex.Entry e = index.insert(new RecordSpec(key(hash), parent == null ? null : key(parent), row),
                SlotList.of(s), false, 0);
        index.checkInvariants();
        return e;
    }

    /** Inserts a chain under {@code parent} (null: a root), root-first: pages for every id but the last, a row. */
    private void chain(RecordIndex index, Long parent, long... ids) {
        for (int i = 0; i < ids.length; i++) {
            insert(index, ids[i], i == 0 ? parent : Long.valueOf(ids[i - 1]), i == ids.length - 1);
        }
    }

    private static List<Long> drain(RecordIndex index) {
        List<Long> order = new ArrayList<>();
        for (RecordIndex.Entry e = index.dropColdest(); e != null; e = index.dropColdest()) {
            order.add(e.key().hash());
            index.checkInvariants();
        }
        return order;
    }

    /** A policy without the duel, so every row is ranked by its worth. */
    private static WorthPolicy byWorth() {
        return new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, false);
    }

    @Test
    void aChainsTail_goesWhole_beforeTheNextChain() {
        RecordIndex index = new RecordIndex(true, byWorth());
        chain(index, null, 1, 2, 3);
        chain(index, null, 11, 12, 13);
        List<Long> order = drain(index);
        assertTrue(order.equals(List.of(3L, 2L, 1L, 13L, 12L, 11L)) || order.equals(List.of(13L, 12L, 11L, 3L, 2L, 1L)),
                "one chain from its tail up, then the other: " + order);
    }

    @Test
    void aLongerTurn_isWorthMore_thanAShorterOne_andAPageOnlyTailNothing() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy);
        chain(index, null, 1);
        chain(index, 1L, 2);
        chain(index, 1L, 3, 4, 5, 6);
        double shortTurn = policy.value(index.get(key(2)));
        double longTurn = policy.value(index.get(key(6)));
        assertTrue(longTurn > shortTurn, "four blocks past the row above beat one: " + longTurn + " vs " + shortTurn);
        assertEquals(Math.pow(4, WorthPolicy.DEPTH_EXPONENT) / Math.pow(1, WorthPolicy.DEPTH_EXPONENT),
                longTurn / shortTurn, 1e-12, "the saving grows as the depth past the row above, to the exponent");
        index.remove(key(6));
        assertEquals(0, policy.value(index.get(key(5))), "a page-only leaf whose child left cannot end a match");
    }

    @Test
    void aPageOnlyRecordBeingPublished_isWorthMorePerSlot_thanARowOfTheSameSaving() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy);
        chain(index, null, 1);
        insert(index, 2, null, false);
        int novelRootClass = 1;
        double row = policy.value(index.get(key(1)));
        double pages = policy.value(index.get(key(2)));
        assertEquals(policy.share(novelRootClass), row, 1e-12, "a root row: its class's share times a saving of 1");
        assertEquals(5, pages, 1e-12, "pages being published: a saving of 1 in one slot, where a row takes five");
    }

    @Test
    void aRowOnAConversationThatWentOn_outlivesAnOlderOneOffRow_onceTheyAreSeenToDiffer() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy);
        // Teach it: one-off rows (a first turn under a shared prompt) are never resumed from, rows of a
        // conversation that went on (second turn) are.
        chain(index, null, 1);
        index.touch(key(1), 1, EvictionPolicy.Use.RESUMED);
        for (long c = 0; c < 6; c++) {
            long first = 100 * (c + 1);
            chain(index, 1L, first);
            index.touch(key(first), 2, EvictionPolicy.Use.RESUMED);
            chain(index, first, first + 1);
            index.touch(key(first + 1), 3, EvictionPolicy.Use.RESUMED);
            chain(index, 1L, first + 50);
            index.remove(key(first + 50)); // dropped, never resumed from: its trial ends as a failure
        }
        // An older second-turn row and a newer first-turn row.
        chain(index, 1L, 900);
        index.touch(key(900), 4, EvictionPolicy.Use.RESUMED);
        chain(index, 900L, 901);
        chain(index, 1L, 950);
        double wentOn = policy.value(index.get(key(901)));
        double oneOff = policy.value(index.get(key(950)));
        assertTrue(wentOn > oneOff, "turn 2 is resumed more often than turn 1: " + wentOn + " vs " + oneOff);
        List<Long> order = drain(index);
        assertTrue(order.indexOf(950L) < order.indexOf(901L), "the newer first-turn row goes first: " + order);
    }

    @Test
    void aClassShare_countsOnlyEndedTrials_soYoungRowsWaitingForTheirNextTurnDoNotSinkIt() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy);
        int novelRootClass = 1;
        for (long r = 1; r <= 4; r++) { // four root rows, each resumed from: four successes
            chain(index, null, r);
            index.touch(key(r), r, EvictionPolicy.Use.RESUMED);
        }
        assertEquals(5.0 / 6, policy.share(novelRootClass), 1e-12);
        for (long r = 11; r <= 20; r++) { // ten more, not resumed from yet (their next turn has not come)
            chain(index, null, r);
        }
        assertEquals(5.0 / 6, policy.share(novelRootClass), 1e-12, "open trials are not failures");
        index.remove(key(11));
        index.remove(key(12));
        assertEquals(5.0 / 8, policy.share(novelRootClass), 1e-12, "two dropped unused: two failures");
        index.touch(key(13), 30, EvictionPolicy.Use.RESUMED);
        assertEquals(6.0 / 9, policy.share(novelRootClass), 1e-12, "one resumed from: a success");
    }

    @Test
    void aRowDroppedApartFromItsPages_endsItsTrialAsAFailure_andItsRecordsRemovalDoesNotCountItAgain() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy, 4); // a row record: 1 page slot, then 4 row slots
        int novelRootClass = 1;
        chain(index, null, 1); // a root row, unused: a novel chain
        chain(index, 1L, 2, 3, 4); // a row three blocks below (worth more), in the same class (the chain is novel)
        boolean rowDroppedApart = false;
        for (RecordIndex.Dropped d = index.dropNext(); d != null; d = index.dropNext()) {
            rowDroppedApart |= !d.whole();
            index.checkInvariants();
        }
        assertTrue(rowDroppedApart, "the root's row went before its pages");
        assertEquals(1.0 / 4, policy.share(novelRootClass), 1e-12, "two trials ended, both failures, each once");
    }

    @Test
    void aRecordUsedAgain_movesBehindAnEqualOne() {
        RecordIndex index = new RecordIndex(true, byWorth());
        chain(index, null, 1);
        chain(index, null, 2);
        index.touch(key(1), 1, EvictionPolicy.Use.REPUBLISHED);
        assertEquals(List.of(2L, 1L), drain(index));
        assertNull(index.dropColdest());
    }

    @Test
    void aPublicationsRecords_arrivingInAnyOrder_rankAsIfTheyArrivedRootFirst() {
        List<List<Long>> orders = new ArrayList<>();
        List<List<Double>> values = new ArrayList<>();
        for (boolean childFirst : new boolean[] {false, true}) {
            WorthPolicy policy = byWorth();
            RecordIndex index = new RecordIndex(true, policy);
            chain(index, null, 1, 2);
            index.touch(key(2), 1, EvictionPolicy.Use.RESUMED);
            if (childFirst) {
                insert(index, 5, 4L, true);
                insert(index, 4, 3L, false);
                insert(index, 3, 2L, false);
                insert(index, 11, 10L, true);
                insert(index, 10, null, false);
            } else {
                insert(index, 3, 2L, false);
                insert(index, 4, 3L, false);
                insert(index, 5, 4L, true);
                insert(index, 10, null, false);
                insert(index, 11, 10L, true);
            }
            values.add(List.of(policy.value(index.get(key(5))), policy.value(index.get(key(11)))));
            orders.add(drain(index));
        }
        assertEquals(values.get(0), values.get(1));
        assertEquals(orders.get(0), orders.get(1));
    }

    @Test
    void theDuel_ranksRowsByRecency_whileTheShadowLruWouldHaveServedSignificantlyMore_andBackByWorth() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy);
        for (long k = 1; k <= 8; k++) {
            chain(index, null, k);
        }
        assertFalse(policy.byRecency(), "with no evidence the policy keeps its own ranking");
        // Rows this policy dropped and the shadow LRU cache still holds are published again: points for recency.
        for (long k = 1; k <= 5; k++) {
            index.remove(key(k));
            chain(index, null, k);
            assertEquals(k == 5, policy.byRecency(), "4 points against none are 2 standard deviations, not more");
        }
        assertEquals(1.0 / 7, policy.value(index.get(key(8))), 1e-12,
                "every row the same value: the share of all ended trials (5 dropped unused)");
        // A resume at a row the shadow no longer holds (it dropped 6 to make room for 9): a point for worth, and the
        // lead (5 against 1) is no longer significant.
        index.remove(key(5));
        chain(index, null, 9);
        index.touch(key(6), 1, EvictionPolicy.Use.RESUMED);
        assertFalse(policy.byRecency());
    }

    @Test
    void theDuel_countsAChainPublishedAgain_once() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy);
        for (long c = 0; c < 6; c++) {
            for (long k = 1; k <= 3; k++) {
                insert(index, 10 * c + k, k == 1 ? null : 10 * c + k - 1, true);
            }
        }
        for (long c = 0; c < 5; c++) {
            for (long k = 3; k >= 1; k--) {
                index.remove(key(10 * c + k));
            }
            for (long k = 1; k <= 3; k++) {
                insert(index, 10 * c + k, k == 1 ? null : 10 * c + k - 1, true);
            }
            assertEquals(c == 4, policy.byRecency(), "a point per chain, not per row: " + (c + 1));
        }
    }

    @Test
    void aRowOthersHangFrom_goesBeforeItsPages_whichStayUntilTheirLastChildLeaves() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy, 4); // a row record: 1 page slot, then 4 row slots
        chain(index, null, 1);
        chain(index, 1L, 2);
        assertTrue(index.get(key(1)).dropsRowOnly(), "a row with a child may go alone");
        assertEquals(4 + 5, index.droppableSlots(), "the parent's row and the whole child");
        List<String> drops = new ArrayList<>();
        for (RecordIndex.Dropped d = index.dropNext(); d != null; d = index.dropNext()) {
            drops.add(d.entry().key().hash() + (d.whole() ? " whole" : " row"));
            int expected = !d.whole() ? 4 : d.entry().spec().hasRow() ? 5 : 1; // a row, a row record, a page
            assertEquals(expected, d.freed().count(), drops.toString());
            index.checkInvariants();
            if (!d.whole()) {
                assertFalse(index.get(key(1)).spec().hasRow());
                assertEquals(1, index.get(key(1)).slots().count(), "its page stays");
            }
        }
        assertTrue(drops.equals(List.of("1 row", "2 whole", "1 whole"))
                || drops.equals(List.of("2 whole", "1 whole")), "the pages go last or with their row: " + drops);
        assertEquals(0, index.size());
    }

    @Test
    void aRowOthersHangFrom_isRankedByWorth_evenWhileRowsAreRankedByRecency() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy, 4);
        for (long k = 1; k <= 8; k++) {
            chain(index, null, k);
        }
        for (long k = 1; k <= 5; k++) {
            index.remove(key(k));
            chain(index, null, k);
        }
        assertTrue(policy.byRecency());
        double recency = 1.0 / 7;
        insert(index, 100, null, false);
        insert(index, 101, 100L, true);
        insert(index, 102, 101L, true);
        assertTrue(index.get(key(101)).dropsRowOnly());
        assertEquals(recency, policy.value(index.get(key(102))), 1e-12, "a leaf row: the recency constant");
        assertTrue(Math.abs(policy.value(index.get(key(101))) - recency) > 1e-3, "the row others hang from: its worth");
    }
}
