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
    void plan_removingARecord_removesItsDescendantsDeepestFirst() {
        // 1 <- 2 <- 3 and 1 <- 4; the child 3 is fresh but goes with its stale ancestor.
        List<Candidate> recs = List.of(rec(1, null, 10), rec(2, 1L, 20), rec(3, 2L, 990), rec(4, 1L, 30));
        List<Long> plan = hashes(ExpirySweep.plan(recs, 1000, MAX_AGE, 64));
        assertEquals(4, plan.size());
        assertTrue(plan.indexOf(3L) < plan.indexOf(2L));
        assertTrue(plan.indexOf(2L) < plan.indexOf(1L));
        assertTrue(plan.indexOf(4L) < plan.indexOf(1L));
        assertEquals(1L, plan.getLast());
    }

    @Test
    void plan_aUsedChild_keepsItsRefreshedAncestors() {
        // A use of 3 refreshed 1 and 2 (B18), so only the old sibling chain 4 goes.
        List<Candidate> recs = List.of(rec(1, null, 980), rec(2, 1L, 980), rec(3, 2L, 980), rec(4, null, 5));
        assertEquals(List.of(4L), hashes(ExpirySweep.plan(recs, 1000, MAX_AGE, 64)));
    }

    @Test
    void plan_removesAtMostMaxRecords_neverAParentBeforeItsChildren() {
        List<Candidate> recs = new ArrayList<>();
        recs.add(rec(0, null, 0));
        for (long i = 1; i < 100; i++) {
            recs.add(rec(i, i - 1, i));
        }
        List<Long> plan = hashes(ExpirySweep.plan(recs, 10_000, MAX_AGE, ExpirySweep.MAX_RECORDS_PER_SWEEP));
        assertEquals(64, plan.size());
        // The deepest 64 of the chain 0..99: 99 down to 36.
        assertEquals(99L, plan.getFirst());
        assertEquals(36L, plan.getLast());
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
