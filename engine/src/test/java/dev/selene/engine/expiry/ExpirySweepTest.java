package dev.selene.engine.expiry;

import dev.selene.engine.expiry.ExpirySweep.Candidate;
import dev.selene.engine.key.RecordKey;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ExpirySweepTest {

    private static final long MAX_AGE = 100;

    private static RecordKey key(long n) {
        return new RecordKey("ns", n);
    }

    private static Candidate rec(long k, Long parent, long lastUse) {
        return new Candidate(key(k), parent == null ? null : key(parent), lastUse, false);
    }

    private static List<Long> hashes(List<RecordKey> keys) {
        return keys.stream().map(RecordKey::hash).toList();
    }

    @Test
    void plan_whenNothingIsStale_removesNothing() {
        List<Candidate> recs = List.of(rec(1, null, 950), rec(2, 1L, 990));
        assertEquals(List.of(), ExpirySweep.plan(recs, 1000, MAX_AGE, 64));
    }

    @Test
    void plan_removesOldestFirst_andStopsAtFreshRecords() {
        List<Candidate> recs = List.of(rec(1, null, 500), rec(2, null, 100), rec(3, null, 300), rec(4, null, 950));
        assertEquals(List.of(2L, 3L, 1L), hashes(ExpirySweep.plan(recs, 1000, MAX_AGE, 64)));
    }

    @Test
    void plan_aRecordUnusedForExactlyMaxAge_isFresh() {
        assertEquals(List.of(), ExpirySweep.plan(List.of(rec(1, null, 900)), 1000, MAX_AGE, 64));
        assertEquals(List.of(1L), hashes(ExpirySweep.plan(List.of(rec(1, null, 899)), 1000, MAX_AGE, 64)));
    }

    @Test
    void plan_aStaleRecordWithAFreshChild_isNotALeaf_andStays() {
        // 1 <- 2 <- 3 and 1 <- 4: 3 is fresh, so 2 and 1 are not leaves; only the stale leaf 4 and the stale root 5 go.
        List<Candidate> recs = List.of(rec(1, null, 10), rec(2, 1L, 20), rec(3, 2L, 990), rec(4, 1L, 30),
                rec(5, null, 40));
        assertEquals(List.of(4L, 5L), hashes(ExpirySweep.plan(recs, 1000, MAX_AGE, 64)));
    }

    @Test
    void plan_aStaleChain_leavesFromItsTipInward_inOneSweep() {
        // 1 <- 2 <- 3 and 1 <- 4, all stale: each parent goes once its last child has.
        List<Candidate> recs = List.of(rec(1, null, 40), rec(2, 1L, 30), rec(3, 2L, 10), rec(4, 1L, 20));
        assertEquals(List.of(3L, 4L, 2L, 1L), hashes(ExpirySweep.plan(recs, 1000, MAX_AGE, 64)));
    }

    @Test
    void plan_endsAtTheFirstFreshLeaf_soAStaleAncestorAboveItStays() {
        // After a restart an ancestor may look older than its child: 1 is the oldest record but its leaf 2 is fresh.
        List<Candidate> recs = List.of(rec(1, null, 5), rec(2, 1L, 950), rec(3, null, 10), rec(4, null, 960));
        assertEquals(List.of(3L), hashes(ExpirySweep.plan(recs, 1000, MAX_AGE, 64)));
    }

    @Test
    void plan_aChildInFlight_keepsItsParentFromBeingALeaf() {
        List<Candidate> recs = List.of(rec(1, null, 10), rec(2, null, 20));
        assertEquals(List.of(2L), hashes(ExpirySweep.plan(recs, List.of(key(1)), 1000, MAX_AGE, 64)));
    }

    @Test
    void plan_aUsedChild_keepsItsRefreshedAncestors() {
        // A use of 3 refreshed 1 and 2 (B18), so only the old sibling chain 4 goes.
        List<Candidate> recs = List.of(rec(1, null, 980), rec(2, 1L, 980), rec(3, 2L, 980), rec(4, null, 5));
        assertEquals(List.of(4L), hashes(ExpirySweep.plan(recs, 1000, MAX_AGE, 64)));
    }

    @Test
    void plan_removesAtMostMaxRecords_oldestLeavesFirst_neverAParentBeforeItsChildren() {
        // A stale chain 0 <- 1 <- ... <- 99 (each parent used after its child, as a use refreshes ancestors), 80
        // stale roots 1000.. older than all of it, and fresh roots beside them.
        List<Candidate> recs = new ArrayList<>();
        for (long i = 0; i < 100; i++) {
            recs.add(rec(i, i == 0 ? null : i - 1, 5000 - i));
        }
        for (long r = 0; r < 80; r++) {
            recs.add(rec(1000 + r, null, r));
        }
        for (long f = 0; f < 10; f++) {
            recs.add(rec(2000 + f, null, 9990));
        }
        List<Long> first = hashes(ExpirySweep.plan(recs, 10_000, MAX_AGE, ExpirySweep.MAX_RECORDS_PER_SWEEP));
        assertEquals(64, first.size());
        assertEquals(1000L, first.getFirst());
        assertEquals(1063L, first.getLast(), "the 64 oldest roots, oldest first");

        recs.removeIf(c -> first.contains(c.key().hash()));
        List<Long> second = hashes(ExpirySweep.plan(recs, 10_000, MAX_AGE, ExpirySweep.MAX_RECORDS_PER_SWEEP));
        assertEquals(64, second.size());
        assertEquals(List.of(1064L, 1079L, 99L, 52L), List.of(second.get(0), second.get(15), second.get(16),
                second.getLast()), "the rest of the roots, then the chain from its tip");
        assertTrue(second.stream().noneMatch(k -> k >= 2000), "fresh roots stay");
    }

    @Test
    void plan_skipsSubtreesWithABusyRecord() {
        List<Candidate> recs = List.of(rec(1, null, 10), new Candidate(key(2), key(1), 20, true), rec(3, null, 15));
        assertEquals(List.of(3L), hashes(ExpirySweep.plan(recs, 1000, MAX_AGE, 64)));
    }

    @Test
    void plan_rejectsANonPositiveMaxAge() {
        assertThrows(IllegalArgumentException.class, () -> ExpirySweep.plan(List.of(), 0, 0, 64));
    }

    @Test
    void deepestFirst_listsEveryDescendantBeforeItsAncestor() {
        List<Candidate> recs = List.of(rec(1, null, 0), rec(2, 1L, 0), rec(3, 1L, 0), rec(4, 3L, 0), rec(5, 4L, 0));
        List<Long> order = hashes(new ExpirySweep.Subtrees(recs).deepestFirst(key(1)));
        assertEquals(5, order.size());
        assertTrue(order.indexOf(5L) < order.indexOf(4L));
        assertTrue(order.indexOf(4L) < order.indexOf(3L));
        assertEquals(1L, order.getLast());
    }
}
