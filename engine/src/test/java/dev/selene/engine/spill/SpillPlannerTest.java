package dev.selene.engine.spill;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.spill.SpillPlanner.Ancestor;
import dev.selene.engine.spill.SpillPlanner.Candidate;
import dev.selene.engine.spill.SpillPlanner.FailureAction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The spill planner's choices (B4 pressure, B11 ancestor first, B12 failures), one behaviour per test. */
class SpillPlannerTest {

    private static final long LARGE_TARGET = 1_000_000;

    // ---- helpers -------------------------------------------------------------------------------------------

    private static RecordKey key(long n) {
        return new RecordKey("ns", n);
    }

    private static RecordSpec root(long n) {
        return new RecordSpec(key(n), null, true);
    }

    private static RecordSpec child(long n, RecordSpec parent) {
        return new RecordSpec(key(n), parent.key(), true);
    }

    private static Ancestor parked(RecordSpec spec, int slots) {
        return new Ancestor(spec, slots);
    }

    private static Candidate candidate(RecordSpec spec, int slots, Ancestor... parkedAncestors) {
        return new Candidate(spec, slots, List.of(parkedAncestors));
    }

    private static List<RecordKey> keys(List<RecordSpec> specs) {
        return specs.stream().map(RecordSpec::key).toList();
    }

    // ---- construction ----------------------------------------------------------------------------------------

    @Test
    void constructor_withACapBelowOne_isRejectedNamingTheCap() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new SpillPlanner(0));

        assertEquals("spill in-flight cap must be at least 1, was 0", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new SpillPlanner(-3));
    }

    @Test
    void newPlanner_hasNothingInFlightAndReportsItsCap() {
        SpillPlanner planner = new SpillPlanner(7);

        assertEquals(7, planner.inFlightCap());
        assertEquals(0, planner.inFlight());
        assertEquals(0, planner.maxInFlight());
        assertEquals(0, planner.slotsInFlight());
    }

    @Test
    void plan_withNoCandidates_startsNothing() {
        SpillPlanner planner = new SpillPlanner(4);

        assertEquals(List.of(), planner.plan(List.of(), LARGE_TARGET));
        assertEquals(0, planner.inFlight());
    }

    // ---- B11 ancestor first --------------------------------------------------------------------------------

    @Test
    void tenColdChildrenOfHotUncommittedParents_startExactlyTheCapOfParentWritesAndNoChildWrite() {
        SpillPlanner planner = new SpillPlanner(4);
        List<Candidate> candidates = new ArrayList<>();
        List<RecordKey> parents = new ArrayList<>();
        List<RecordKey> children = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            RecordSpec parent = root(100 + i);
            RecordSpec child = child(200 + i, parent);
            parents.add(parent.key());
            children.add(child.key());
            candidates.add(candidate(child, 3, parked(parent, 5)));
        }

        List<RecordSpec> started = planner.plan(candidates, LARGE_TARGET);

        assertEquals(4, started.size());
        assertEquals(parents.subList(0, 4), keys(started), "the parents of the four coldest children, in order");
        for (RecordSpec s : started) {
            assertTrue(parents.contains(s.key()), s.key() + " is a parent");
            assertFalse(children.contains(s.key()), s.key() + " is not a child");
            assertTrue(planner.isWriting(s.key()));
        }
        for (RecordKey c : children) {
            assertFalse(planner.isWriting(c), "no child write: " + c);
        }
        assertEquals(4, planner.inFlight());
        assertEquals(4 * 5, planner.slotsInFlight(), "the parents' slots are in flight, not the children's");
    }

    @Test
    void plan_forACandidateWhoseParentCommitted_startsTheCandidateItself() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec parent = root(1);
        RecordSpec child = child(2, parent);
        planner.knownCommitted(parent.key());

        List<RecordSpec> started = planner.plan(List.of(candidate(child, 3)), LARGE_TARGET);

        assertEquals(List.of(child), started);
        assertTrue(planner.isWriting(child.key()));
        assertEquals(3, planner.slotsInFlight());
    }

    @Test
    void plan_forARootCandidate_startsItWithItsSlots() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec r = root(1);

        assertEquals(List.of(r), planner.plan(List.of(candidate(r, 6)), LARGE_TARGET));
        assertEquals(1, planner.inFlight());
        assertEquals(6, planner.slotsInFlight());
    }

    @Test
    void plan_forACandidateWithAnUncommittedChain_startsTheRootMostUncommittedAncestor() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec committedRoot = root(1);
        RecordSpec grandParent = child(2, committedRoot);
        RecordSpec parent = child(3, grandParent);
        RecordSpec leaf = child(4, parent);
        planner.knownCommitted(committedRoot.key());

        List<RecordSpec> started = planner.plan(
                List.of(candidate(leaf, 1, parked(parent, 2), parked(grandParent, 7))), LARGE_TARGET);

        assertEquals(List.of(grandParent), started);
        assertEquals(7, planner.slotsInFlight(), "the ancestor's own slots are in flight");
        assertFalse(planner.isWriting(leaf.key()));
        assertFalse(planner.isWriting(parent.key()));
    }

    @Test
    void plan_forAChainWithNoCommittedRecord_startsTheRoot() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec r = root(1);
        RecordSpec mid = child(2, r);
        RecordSpec leaf = child(3, mid);

        List<RecordSpec> started = planner.plan(
                List.of(candidate(leaf, 1, parked(mid, 1), parked(r, 4))), LARGE_TARGET);

        assertEquals(List.of(r), started);
    }

    @Test
    void plan_climbsTheChainOneCommitAtATime_untilTheCandidateItselfIsWritten() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec r = root(1);
        RecordSpec mid = child(2, r);
        RecordSpec leaf = child(3, mid);
        Candidate c = candidate(leaf, 1, parked(mid, 1), parked(r, 1));

        assertEquals(List.of(r), planner.plan(List.of(c), LARGE_TARGET));
        assertEquals(List.of(), planner.plan(List.of(c), LARGE_TARGET), "waits while the root is written");
        planner.committed(r.key());
        assertEquals(List.of(mid), planner.plan(List.of(c), LARGE_TARGET));
        assertEquals(List.of(), planner.plan(List.of(c), LARGE_TARGET), "waits while the middle is written");
        planner.committed(mid.key());
        assertEquals(List.of(leaf), planner.plan(List.of(c), LARGE_TARGET));
        planner.committed(leaf.key());
        assertEquals(List.of(), planner.plan(List.of(c), LARGE_TARGET), "a committed candidate is not written again");
        assertTrue(planner.isCommitted(leaf.key()));
        assertEquals(0, planner.inFlight());
    }

    @Test
    void plan_forACandidateWhoseAncestorIsBeingWritten_waitsAndStartsItAfterTheAncestorCommits() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec parent = root(1);
        RecordSpec child = child(2, parent);
        assertEquals(List.of(parent), planner.plan(List.of(candidate(parent, 2)), LARGE_TARGET));

        Candidate c = candidate(child, 3, parked(parent, 2));
        assertEquals(List.of(), planner.plan(List.of(c), LARGE_TARGET), "the child waits for its parent's write");
        assertFalse(planner.isWriting(child.key()));
        assertEquals(1, planner.inFlight(), "nothing else started");

        planner.committed(parent.key());
        // The memory tier now sees the parent as committed: no longer a parked ancestor.
        assertEquals(List.of(child), planner.plan(List.of(candidate(child, 3)), LARGE_TARGET));
        assertTrue(planner.isWriting(child.key()));
        assertEquals(3, planner.slotsInFlight());
    }

    @Test
    void plan_afterTheAncestorCommits_startsTheChildEvenIfTheCandidateStillListsIt() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec parent = root(1);
        RecordSpec child = child(2, parent);
        Candidate c = candidate(child, 3, parked(parent, 2));
        assertEquals(List.of(parent), planner.plan(List.of(c), LARGE_TARGET));

        planner.committed(parent.key());

        assertEquals(List.of(child), planner.plan(List.of(c), LARGE_TARGET));
    }

    @Test
    void plan_forACandidateWhoseGrandParentIsBeingWritten_waitsWithoutStartingTheParent() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec gp = root(1);
        RecordSpec parent = child(2, gp);
        RecordSpec leaf = child(3, parent);
        assertEquals(List.of(gp), planner.plan(List.of(candidate(gp, 1)), LARGE_TARGET));

        List<RecordSpec> started = planner.plan(
                List.of(candidate(leaf, 1, parked(parent, 1), parked(gp, 1))), LARGE_TARGET);

        assertEquals(List.of(), started);
        assertFalse(planner.isWriting(parent.key()));
        assertFalse(planner.isWriting(leaf.key()));
    }

    @Test
    void plan_forSiblingsOfOneUncommittedParent_startsTheParentOnce() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec parent = root(1);
        List<Candidate> siblings = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            siblings.add(candidate(child(10 + i, parent), 1, parked(parent, 2)));
        }

        List<RecordSpec> started = planner.plan(siblings, LARGE_TARGET);

        assertEquals(List.of(parent), started);
        assertEquals(1, planner.inFlight());
        assertEquals(2, planner.slotsInFlight());
    }

    @Test
    void plan_forACandidateWhoseParentIsStillPublishing_skipsItAndStartsLaterCandidates() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec publishingParent = root(1);
        RecordSpec child = child(2, publishingParent);
        RecordSpec other = root(3);

        // The parent is neither committed nor parked: the candidate lists no parked ancestor.
        List<RecordSpec> started = planner.plan(List.of(candidate(child, 1), candidate(other, 1)), LARGE_TARGET);

        assertEquals(List.of(other), started);
        assertFalse(planner.isWriting(child.key()));
        assertFalse(planner.isWriting(publishingParent.key()));
    }

    @Test
    void plan_forACandidateWhoseGrandParentIsStillPublishing_startsNothingOnItsChain() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec publishingGp = root(1);
        RecordSpec parent = child(2, publishingGp);
        RecordSpec leaf = child(3, parent);

        List<RecordSpec> started = planner.plan(List.of(candidate(leaf, 1, parked(parent, 1))), LARGE_TARGET);

        assertEquals(List.of(), started);
        assertFalse(planner.isWriting(parent.key()), "the parent's own parent is not durable: it must wait too");
        assertEquals(0, planner.inFlight());
    }

    @Test
    void plan_forACandidateWhoseParkedAncestorsDoNotMatchItsParent_skipsIt() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec parent = root(1);
        RecordSpec stranger = root(9);
        RecordSpec child = child(2, parent);

        List<RecordSpec> started = planner.plan(List.of(candidate(child, 1, parked(stranger, 1))), LARGE_TARGET);

        assertEquals(List.of(), started);
        assertFalse(planner.isWriting(stranger.key()));
    }

    @Test
    void plan_skipsCandidatesAlreadyWrittenOrCommitted() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec writing = root(1);
        RecordSpec done = root(2);
        RecordSpec fresh = root(3);
        assertTrue(planner.startUnconditionally(writing, 1));
        planner.knownCommitted(done.key());

        List<RecordSpec> started = planner.plan(
                List.of(candidate(writing, 1), candidate(done, 1), candidate(fresh, 1)), LARGE_TARGET);

        assertEquals(List.of(fresh), started);
        assertEquals(2, planner.inFlight());
    }

    @Test
    void plan_withTheSameCandidateTwice_startsItOnce() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec r = root(1);

        List<RecordSpec> started = planner.plan(List.of(candidate(r, 2), candidate(r, 2)), LARGE_TARGET);

        assertEquals(List.of(r), started);
        assertEquals(2, planner.slotsInFlight());
    }

    // ---- B4 pressure target and the in-flight cap ----------------------------------------------------------

    @Test
    void plan_stopsOnceTheStartedSlotsReachTheTarget() {
        SpillPlanner planner = new SpillPlanner(10);
        List<Candidate> candidates = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            candidates.add(candidate(root(i), 3));
        }

        List<RecordSpec> started = planner.plan(candidates, 9);

        assertEquals(List.of(key(0), key(1), key(2)), keys(started), "coldest first, 3 × 3 slots reach 9");
        assertEquals(9, planner.slotsInFlight());
    }

    @Test
    void plan_mayOvershootTheTargetByTheLastRecordButNoMore() {
        SpillPlanner planner = new SpillPlanner(10);
        List<Candidate> candidates = List.of(candidate(root(0), 4), candidate(root(1), 4), candidate(root(2), 4));

        List<RecordSpec> started = planner.plan(candidates, 5);

        assertEquals(List.of(key(0), key(1)), keys(started), "4 < 5 so one more starts; 8 ≥ 5 stops");
        assertEquals(8, planner.slotsInFlight());
    }

    @Test
    void plan_countsWritesAlreadyInFlightTowardTheTarget() {
        SpillPlanner planner = new SpillPlanner(10);
        assertEquals(2, planner.plan(List.of(candidate(root(0), 3), candidate(root(1), 3)), 6).size());

        assertEquals(List.of(), planner.plan(List.of(candidate(root(2), 3)), 6),
                "6 slots already in flight meet a target of 6");
        assertEquals(List.of(root(2)), planner.plan(List.of(candidate(root(2), 3), candidate(root(3), 3)), 7),
                "one more write reaches 9 ≥ 7");
        assertEquals(9, planner.slotsInFlight());
    }

    @Test
    void plan_withATargetOfZero_startsNothing() {
        SpillPlanner planner = new SpillPlanner(4);

        assertEquals(List.of(), planner.plan(List.of(candidate(root(1), 1)), 0));
        assertEquals(0, planner.inFlight());
    }

    @Test
    void plan_countsAStartedAncestorsSlotsTowardTheTarget() {
        SpillPlanner planner = new SpillPlanner(10);
        List<Candidate> candidates = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            RecordSpec parent = root(100 + i);
            candidates.add(candidate(child(200 + i, parent), 1, parked(parent, 10)));
        }

        List<RecordSpec> started = planner.plan(candidates, 15);

        assertEquals(List.of(key(100), key(101)), keys(started),
                "each parent brings 10 slots: two reach 20 ≥ 15, though the children have only 1 each");
        assertEquals(20, planner.slotsInFlight());
    }

    @Test
    void plan_keepsTheInFlightCapAcrossCalls() {
        SpillPlanner planner = new SpillPlanner(3);
        List<Candidate> candidates = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            candidates.add(candidate(root(i), 1));
        }

        assertEquals(3, planner.plan(candidates, LARGE_TARGET).size());
        assertEquals(List.of(), planner.plan(candidates, LARGE_TARGET), "the cap is full");
        planner.committed(key(1));
        assertEquals(List.of(root(3)), planner.plan(candidates, LARGE_TARGET), "one finished, one more starts");
        assertEquals(3, planner.inFlight());
        assertEquals(3, planner.maxInFlight());
    }

    @Test
    void maxInFlight_tracksTheHighWaterMarkNotTheCurrentCount() {
        SpillPlanner planner = new SpillPlanner(8);
        planner.plan(List.of(candidate(root(1), 1), candidate(root(2), 1), candidate(root(3), 1)), LARGE_TARGET);
        assertEquals(3, planner.maxInFlight());

        planner.committed(key(1));
        planner.committed(key(2));
        planner.committed(key(3));
        assertEquals(0, planner.inFlight());
        assertEquals(3, planner.maxInFlight());

        planner.plan(List.of(candidate(root(4), 1)), LARGE_TARGET);
        assertEquals(3, planner.maxInFlight(), "one write does not lower the mark");
        assertTrue(planner.startUnconditionally(root(5), 1));
        assertTrue(planner.startUnconditionally(root(6), 1));
        assertTrue(planner.startUnconditionally(root(7), 1));
        assertEquals(4, planner.inFlight());
        assertEquals(4, planner.maxInFlight(), "unconditional starts raise the mark too");
    }

    @Test
    void committed_releasesTheWritesSlots() {
        SpillPlanner planner = new SpillPlanner(4);
        planner.plan(List.of(candidate(root(1), 5), candidate(root(2), 2)), LARGE_TARGET);

        planner.committed(key(1));

        assertEquals(2, planner.slotsInFlight());
        assertEquals(1, planner.inFlight());
        assertTrue(planner.isCommitted(key(1)));
        assertFalse(planner.isWriting(key(1)));
    }

    // ---- B12 failures --------------------------------------------------------------------------------------

    @Test
    void failed_firstNonDiskFullFailure_retriesAndTheWriteStaysInFlight() {
        SpillPlanner planner = new SpillPlanner(4);
        planner.plan(List.of(candidate(root(1), 5)), LARGE_TARGET);

        assertEquals(FailureAction.RETRY, planner.failed(key(1), false));

        assertTrue(planner.isWriting(key(1)));
        assertFalse(planner.isCommitted(key(1)));
        assertEquals(1, planner.inFlight());
        assertEquals(5, planner.slotsInFlight(), "the retry keeps the record's slots in flight");
    }

    @Test
    void failed_secondFailure_givesUpAndReleasesTheWrite() {
        SpillPlanner planner = new SpillPlanner(4);
        planner.plan(List.of(candidate(root(1), 5)), LARGE_TARGET);
        planner.failed(key(1), false);

        assertEquals(FailureAction.GIVE_UP, planner.failed(key(1), false));

        assertFalse(planner.isWriting(key(1)));
        assertFalse(planner.isCommitted(key(1)));
        assertEquals(0, planner.inFlight());
        assertEquals(0, planner.slotsInFlight());
    }

    @Test
    void failed_diskFull_givesUpAtOnce() {
        SpillPlanner planner = new SpillPlanner(4);
        planner.plan(List.of(candidate(root(1), 5)), LARGE_TARGET);

        assertEquals(FailureAction.GIVE_UP, planner.failed(key(1), true));

        assertFalse(planner.isWriting(key(1)));
        assertEquals(0, planner.inFlight());
        assertEquals(0, planner.slotsInFlight());
    }

    @Test
    void failed_diskFullOnTheRetry_givesUp() {
        SpillPlanner planner = new SpillPlanner(4);
        planner.plan(List.of(candidate(root(1), 5)), LARGE_TARGET);
        assertEquals(FailureAction.RETRY, planner.failed(key(1), false));

        assertEquals(FailureAction.GIVE_UP, planner.failed(key(1), true));
        assertEquals(0, planner.inFlight());
    }

    @Test
    void failed_thenCommittedOnTheRetry_forgetsTheFailure() {
        SpillPlanner planner = new SpillPlanner(4);
        planner.plan(List.of(candidate(root(1), 5)), LARGE_TARGET);
        planner.failed(key(1), false);
        planner.committed(key(1));
        planner.forget(key(1));

        // Written again later: a fresh first failure is retried again.
        assertEquals(List.of(root(1)), planner.plan(List.of(candidate(root(1), 5)), LARGE_TARGET));
        assertEquals(FailureAction.RETRY, planner.failed(key(1), false));
    }

    @Test
    void failed_afterGivingUp_aLaterWriteOfTheSameKeyStartsWithACleanRecord() {
        SpillPlanner planner = new SpillPlanner(4);
        planner.plan(List.of(candidate(root(1), 5)), LARGE_TARGET);
        planner.failed(key(1), false);
        assertEquals(FailureAction.GIVE_UP, planner.failed(key(1), false));

        // The record is published again and spilled again.
        assertEquals(List.of(root(1)), planner.plan(List.of(candidate(root(1), 5)), LARGE_TARGET));
        assertEquals(FailureAction.RETRY, planner.failed(key(1), false));
    }

    @Test
    void failed_ofAParent_leavesItsWaitingChildUnstarted() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec parent = root(1);
        RecordSpec child = child(2, parent);
        Candidate c = candidate(child, 1, parked(parent, 1));
        planner.plan(List.of(c), LARGE_TARGET);

        assertEquals(FailureAction.GIVE_UP, planner.failed(parent.key(), true));

        assertFalse(planner.isWriting(child.key()));
        assertFalse(planner.isCommitted(parent.key()));
        assertEquals(0, planner.inFlight());
    }

    @Test
    void failed_retryStillCountsTowardTheCap() {
        SpillPlanner planner = new SpillPlanner(1);
        planner.plan(List.of(candidate(root(1), 1)), LARGE_TARGET);
        planner.failed(key(1), false);

        assertEquals(List.of(), planner.plan(List.of(candidate(root(2), 1)), LARGE_TARGET));
    }

    @Test
    void cancel_removesAPlannedWriteWithoutCommittingIt() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec parent = root(1);
        RecordSpec child = child(2, parent);
        planner.plan(List.of(candidate(parent, 4), candidate(root(3), 1)), LARGE_TARGET);

        planner.cancel(parent.key());

        assertFalse(planner.isWriting(parent.key()));
        assertFalse(planner.isCommitted(parent.key()));
        assertEquals(1, planner.inFlight());
        assertEquals(1, planner.slotsInFlight());
        assertEquals(List.of(), planner.plan(List.of(candidate(child, 1)), LARGE_TARGET),
                "a child of a cancelled parent cannot start (its parent is not parked any more)");
    }

    @Test
    void cancel_ofAnUnknownKey_changesNothing() {
        SpillPlanner planner = new SpillPlanner(4);
        planner.plan(List.of(candidate(root(1), 4)), LARGE_TARGET);

        planner.cancel(key(99));

        assertEquals(1, planner.inFlight());
        assertEquals(4, planner.slotsInFlight());
    }

    @Test
    void cancel_forgetsAFailureSoALaterWriteIsRetriedAgain() {
        SpillPlanner planner = new SpillPlanner(4);
        planner.plan(List.of(candidate(root(1), 1)), LARGE_TARGET);
        planner.failed(key(1), false);
        planner.cancel(key(1));
        assertEquals(0, planner.inFlight());

        planner.plan(List.of(candidate(root(1), 1)), LARGE_TARGET);
        assertEquals(FailureAction.RETRY, planner.failed(key(1), false));
    }

    @Test
    void forget_makesACommittedKeyUncommittedAgain() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec parent = root(1);
        RecordSpec child = child(2, parent);
        planner.plan(List.of(candidate(parent, 1)), LARGE_TARGET);
        planner.committed(parent.key());
        assertTrue(planner.isCommitted(parent.key()));

        planner.forget(parent.key());

        assertFalse(planner.isCommitted(parent.key()));
        assertFalse(planner.startUnconditionally(child, 1), "a child cannot start under a forgotten parent");
        assertEquals(List.of(parent), planner.plan(List.of(candidate(child, 1, parked(parent, 1))), LARGE_TARGET),
                "the parent must be written again first");
    }

    @Test
    void knownCommitted_letsChildrenStart() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec recovered = root(1);
        RecordSpec child = child(2, recovered);
        assertEquals(List.of(), planner.plan(List.of(candidate(child, 1)), LARGE_TARGET));

        planner.knownCommitted(recovered.key());

        assertTrue(planner.isCommitted(recovered.key()));
        assertFalse(planner.isWriting(recovered.key()));
        assertEquals(0, planner.slotsInFlight());
        assertEquals(List.of(child), planner.plan(List.of(candidate(child, 1)), LARGE_TARGET));
    }

    @Test
    void startUnconditionally_ofARoot_starts() {
        SpillPlanner planner = new SpillPlanner(4);

        assertTrue(planner.startUnconditionally(root(1), 3));

        assertTrue(planner.isWriting(key(1)));
        assertEquals(3, planner.slotsInFlight());
    }

    @Test
    void startUnconditionally_onlyWhenTheParentCommitted() {
        SpillPlanner planner = new SpillPlanner(4);
        RecordSpec parent = root(1);
        RecordSpec child = child(2, parent);

        assertFalse(planner.startUnconditionally(child, 1), "parent unknown");
        assertTrue(planner.startUnconditionally(parent, 1));
        assertFalse(planner.startUnconditionally(child, 1), "parent being written");
        assertFalse(planner.isWriting(child.key()));

        planner.committed(parent.key());

        assertTrue(planner.startUnconditionally(child, 2));
        assertTrue(planner.isWriting(child.key()));
        assertEquals(2, planner.slotsInFlight());
    }

    @Test
    void startUnconditionally_refusesARecordAlreadyWritingOrCommitted() {
        SpillPlanner planner = new SpillPlanner(4);
        assertTrue(planner.startUnconditionally(root(1), 1));
        planner.knownCommitted(key(2));

        assertFalse(planner.startUnconditionally(root(1), 1));
        assertFalse(planner.startUnconditionally(root(2), 1));
        assertEquals(1, planner.inFlight());
        assertEquals(1, planner.slotsInFlight());
    }

    @Test
    void startUnconditionally_ignoresThePressureTargetAndTheCap() {
        SpillPlanner planner = new SpillPlanner(1);
        assertTrue(planner.startUnconditionally(root(1), 1));

        assertTrue(planner.startUnconditionally(root(2), 1), "drain at shutdown is not held to the cap");
        assertEquals(2, planner.inFlight());
        assertEquals(List.of(), planner.plan(List.of(candidate(root(3), 1)), LARGE_TARGET),
                "but planning still respects it");
    }

    // ---- randomised: chains, commits, failures, cancels, drains, evictions ----------------------------------

    private static final int RANDOM_STEPS = 6_000;

    /** One record as the simulated memory and disk tiers see it. */
    private static final class Rec {
        final RecordSpec spec;
        final int slots;
        final Rec parent;
        final List<Rec> kids = new ArrayList<>();
        boolean inMemory = true;
        boolean publishing = true;
        boolean onDisk;
        int failures;

        Rec(RecordSpec spec, int slots, Rec parent) {
            this.spec = spec;
            this.slots = slots;
            this.parent = parent;
        }

        RecordKey key() {
            return spec.key();
        }

        /** Memory-only and fully published: what the memory tier offers as a spill candidate. */
        boolean parked() {
            return inMemory && !publishing && !onDisk;
        }
    }

    @ParameterizedTest(name = "cap={0}")
    @ValueSource(ints = {1, 3, 8})
    void randomChainsCommitsAndFailures_neverStartARecordBeforeItsParentCommittedAndKeepTheCap(int cap) {
        long seed = Long.getLong("selene.seed", System.nanoTime());
        System.out.println("SpillPlannerTest randomised cap=" + cap + " seed=" + seed);
        Random random = new Random(seed);
        SpillPlanner planner = new SpillPlanner(cap);
        List<Rec> alive = new ArrayList<>();
        Map<RecordKey, Rec> byKey = new HashMap<>();
        Map<RecordKey, Integer> writes = new HashMap<>();
        long nextKey = 1;
        int started = 0;
        int committedCount = 0;
        int givenUp = 0;

        for (int step = 0; step < RANDOM_STEPS; step++) {
            String at = "seed=" + seed + " cap=" + cap + " step=" + step;
            int op = random.nextInt(100);
            if (op < 25) {
                // publish a new record: a root, or a child of any live record
                Rec parent = alive.isEmpty() || random.nextInt(4) == 0 ? null : alive.get(random.nextInt(alive.size()));
                if (alive.size() > 400) {
                    continue;
                }
                RecordSpec spec = new RecordSpec(key(nextKey++), parent == null ? null : parent.key(),
                        random.nextBoolean());
                Rec r = new Rec(spec, 1 + random.nextInt(4), parent);
                if (parent != null) {
                    parent.kids.add(r);
                }
                alive.add(r);
                byKey.put(r.key(), r);
            } else if (op < 40) {
                // a publication finishes: the record is parked
                Rec r = pick(random, alive, x -> x.inMemory && x.publishing);
                if (r != null) {
                    r.publishing = false;
                }
            } else if (op < 62) {
                // plan under a random pressure, candidates in a random (coldness) order
                List<Candidate> candidates = new ArrayList<>();
                for (Rec r : alive) {
                    if (r.parked()) {
                        candidates.add(new Candidate(r.spec, r.slots, parkedAncestors(r, random)));
                    }
                }
                Collections.shuffle(candidates, random);
                long target = random.nextInt(25);
                int inFlightBefore = planner.inFlight();
                List<RecordSpec> plan = planner.plan(candidates, target);
                for (RecordSpec s : plan) {
                    Rec r = byKey.get(s.key());
                    assertNotNull(r, at + ": planned an unknown record " + s.key());
                    assertTrue(r.parked(), at + ": planned " + s.key() + " which is not parked");
                    assertFalse(writes.containsKey(s.key()), at + ": started " + s.key() + " twice");
                    assertParentCommitted(r, planner, at + ": plan started " + s.key());
                    writes.put(s.key(), r.slots);
                    started++;
                }
                assertTrue(plan.isEmpty() || inFlightBefore < cap, at + ": planned while the cap was full");
                if (planner.inFlight() < cap && planner.slotsInFlight() < target) {
                    for (Candidate c : candidates) {
                        assertCandidateWaitsForAGoodReason(c, planner, at);
                    }
                }
            } else if (op < 84) {
                // a write finishes: commits, or fails (sometimes with a full disk)
                RecordKey k = pickKey(random, writes);
                if (k != null) {
                    Rec r = byKey.get(k);
                    if (random.nextInt(10) < 6) {
                        assertParentCommitted(r, planner, at + ": committing " + k);
                        planner.committed(k);
                        writes.remove(k);
                        r.onDisk = true;
                        r.failures = 0;
                        committedCount++;
                    } else {
                        boolean diskFull = random.nextInt(4) == 0;
                        FailureAction expected = !diskFull && r.failures == 0
                                ? FailureAction.RETRY : FailureAction.GIVE_UP;
                        FailureAction action = planner.failed(k, diskFull);
                        assertEquals(expected, action, at + ": failure " + (r.failures + 1) + " of " + k
                                + (diskFull ? " (disk full)" : ""));
                        if (action == FailureAction.RETRY) {
                            r.failures++;
                            assertTrue(planner.isWriting(k), at + ": a retried write stays in flight");
                        } else {
                            writes.remove(k);
                            drop(r, alive, byKey, writes, at);
                            givenUp++;
                        }
                    }
                }
            } else if (op < 88) {
                // a planned write is cancelled: the record left memory before it could start
                RecordKey k = pickKey(random, writes);
                if (k != null) {
                    planner.cancel(k);
                    writes.remove(k);
                    drop(byKey.get(k), alive, byKey, writes, at);
                }
            } else if (op < 92) {
                // drain one record unconditionally (only below the cap, so the cap invariant stays checkable)
                Rec r = pick(random, alive, Rec::parked);
                if (r != null && planner.inFlight() < cap) {
                    boolean expected = !writes.containsKey(r.key())
                            && (r.parent == null || r.parent.onDisk);
                    boolean got = planner.startUnconditionally(r.spec, r.slots);
                    assertEquals(expected, got, at + ": startUnconditionally(" + r.key() + ")");
                    if (got) {
                        assertParentCommitted(r, planner, at + ": drain started " + r.key());
                        writes.put(r.key(), r.slots);
                        started++;
                    }
                }
            } else if (op < 96) {
                // a clean (committed) record leaves memory; it stays on disk
                Rec r = pick(random, alive, x -> x.inMemory && x.onDisk && !x.publishing);
                if (r != null) {
                    r.inMemory = false;
                }
            } else {
                // a committed record leaves the disk; allowed only when none of its children is on disk or writing
                Rec r = pick(random, alive, x -> x.onDisk
                        && x.kids.stream().noneMatch(kid -> kid.onDisk || writes.containsKey(kid.key())));
                if (r != null) {
                    planner.forget(r.key());
                    r.onDisk = false;
                    if (!r.inMemory) {
                        drop(r, alive, byKey, writes, at);
                    }
                }
            }
            checkInvariants(planner, cap, alive, writes, at);
        }
        System.out.println("SpillPlannerTest randomised cap=" + cap + ": " + started + " writes started, "
                + committedCount + " committed, " + givenUp + " given up, max in flight " + planner.maxInFlight());
        assertTrue(started > 0 && committedCount > 0, "the simulation exercised writes (seed=" + seed + ")");
    }

    /** The candidate's parked (memory-only) ancestors, nearest first; now and then cut short, as a stale view. */
    private static List<Ancestor> parkedAncestors(Rec r, Random random) {
        List<Ancestor> chain = new ArrayList<>();
        for (Rec p = r.parent; p != null && p.parked(); p = p.parent) {
            chain.add(new Ancestor(p.spec, p.slots));
        }
        if (!chain.isEmpty() && random.nextInt(10) == 0) {
            return chain.subList(0, random.nextInt(chain.size()));
        }
        return chain;
    }

    private static void assertParentCommitted(Rec r, SpillPlanner planner, String what) {
        if (r.parent != null) {
            assertTrue(r.parent.onDisk, what + " before its parent " + r.parent.key() + " committed");
            assertTrue(planner.isCommitted(r.parent.key()), what + ": the planner does not see its parent committed");
        }
    }

    /**
     * After a plan that stopped short of both the cap and the target, every candidate was considered: it is
     * written (or committed), or its chain up to the first committed ancestor is blocked by a write in flight or
     * by a parent that is not among its parked ancestors.
     */
    private static void assertCandidateWaitsForAGoodReason(Candidate c, SpillPlanner planner, String at) {
        if (planner.isWriting(c.key()) || planner.isCommitted(c.key())) {
            return;
        }
        RecordSpec cur = c.spec();
        int i = 0;
        while (true) {
            RecordKey parent = cur.parent();
            if (parent == null || planner.isCommitted(parent)) {
                if (!planner.isWriting(cur.key())) {
                    throw new AssertionError(at + ": " + cur.key() + " (for candidate " + c.key()
                            + ") could start but the plan stopped below both cap and target");
                }
                return;
            }
            if (planner.isWriting(parent)) {
                return;
            }
            if (i >= c.parkedAncestors().size() || !c.parkedAncestors().get(i).spec().key().equals(parent)) {
                return;
            }
            cur = c.parkedAncestors().get(i++).spec();
        }
    }

    /** Drops {@code r} and everything under it from the simulated tiers; none of it may be on disk or writing. */
    private static void drop(Rec r, List<Rec> alive, Map<RecordKey, Rec> byKey, Map<RecordKey, Integer> writes,
                             String at) {
        List<Rec> todo = new ArrayList<>(List.of(r));
        while (!todo.isEmpty()) {
            Rec x = todo.removeLast();
            assertFalse(writes.containsKey(x.key()), at + ": dropped " + x.key() + " while it is being written");
            assertFalse(x.onDisk, at + ": dropped " + x.key() + " which is on disk under a dropped ancestor");
            alive.remove(x);
            byKey.remove(x.key());
            todo.addAll(x.kids);
        }
        if (r.parent != null) {
            r.parent.kids.remove(r);
        }
    }

    private static void checkInvariants(SpillPlanner planner, int cap, List<Rec> alive,
                                        Map<RecordKey, Integer> writes, String at) {
        assertTrue(planner.inFlight() <= cap, at + ": " + planner.inFlight() + " writes in flight over cap " + cap);
        assertTrue(planner.maxInFlight() <= cap, at + ": max in flight " + planner.maxInFlight() + " over cap");
        assertTrue(planner.maxInFlight() >= planner.inFlight(), at + ": max in flight below the current count");
        assertEquals(writes.size(), planner.inFlight(), at + ": in-flight count");
        assertEquals(writes.values().stream().mapToLong(Integer::longValue).sum(), planner.slotsInFlight(),
                at + ": slots in flight");
        for (Rec r : alive) {
            assertEquals(writes.containsKey(r.key()), planner.isWriting(r.key()), at + ": writing " + r.key());
            assertEquals(r.onDisk, planner.isCommitted(r.key()), at + ": committed " + r.key());
            if (writes.containsKey(r.key())) {
                assertParentCommitted(r, planner, at + ": " + r.key() + " is being written");
            }
            if (r.onDisk && r.parent != null) {
                assertTrue(r.parent.onDisk, at + ": " + r.key() + " is on disk under an uncommitted parent");
            }
        }
    }

    private static Rec pick(Random random, List<Rec> alive, java.util.function.Predicate<Rec> which) {
        List<Rec> matching = alive.stream().filter(which).toList();
        return matching.isEmpty() ? null : matching.get(random.nextInt(matching.size()));
    }

    private static RecordKey pickKey(Random random, Map<RecordKey, Integer> writes) {
        if (writes.isEmpty()) {
            return null;
        }
        List<RecordKey> keys = writes.keySet().stream().sorted(java.util.Comparator.comparingLong(RecordKey::hash))
                .toList();
        return keys.get(random.nextInt(keys.size()));
    }
}
