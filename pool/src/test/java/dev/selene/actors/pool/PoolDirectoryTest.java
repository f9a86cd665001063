package dev.selene.actors.pool;

import dev.selene.engine.key.RecordKey;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One directory entity's bookkeeping, on a local actor system: the stores are test probes, so that the test decides
 * in which order stores' reports, their answers and the receptionist's listings reach the entity (the faults
 * injected: a listing that lags a store's first report, an answer held back, a copy never made, a store stopped or
 * never listed).
 */
class PoolDirectoryTest {

    private final ActorTestKit kit = ActorTestKit.create();
    /** Stand-ins for three stores; each test lists those it needs. */
    private final TestProbe<ManagerStore.Command> first = kit.createTestProbe("first-store");
    private final TestProbe<ManagerStore.Command> second = kit.createTestProbe("second-store");
    private final TestProbe<ManagerStore.Command> third = kit.createTestProbe("third-store");

    @AfterEach
    void stop() {
        kit.shutdownTestKit();
    }

    private static final ManagerConfig CONFIG = new ManagerConfig(PoolFixture.LAYOUT,
            64L * PoolFixture.LAYOUT.slotBytes(), null, 2, 1);

    /**
     * The entity's recheck in these tests: shorter than a manager's, so that waits past it take less time, and long
     * enough that a check this test makes within half of it is not raced by the entity's own.
     */
    private static final Duration RECHECK = Duration.ofSeconds(2);
    private static final PoolDirectory.Timings TIMINGS = new PoolDirectory.Timings(PoolDirectory.UNLISTED_PATIENCE,
            PoolDirectory.COPY_PATIENCE, RECHECK);

    /** A directory entity started with {@code listed} registered, each holding nothing, once it serves requests. */
    @SafeVarargs
    private ActorRef<PoolDirectory.Command> startWith(TestProbe<ManagerStore.Command>... listed) {
        return startWith(TIMINGS, listed);
    }

    /** The same, waiting as {@code timings} says. */
    @SafeVarargs
    private ActorRef<PoolDirectory.Command> startWith(PoolDirectory.Timings timings,
                                                      TestProbe<ManagerStore.Command>... listed) {
        return startWith(CONFIG, timings, listed);
    }

    /** The same, with the managers' settings {@code config}. */
    @SafeVarargs
    private ActorRef<PoolDirectory.Command> startWith(ManagerConfig config, PoolDirectory.Timings timings,
                                                      TestProbe<ManagerStore.Command>... listed) {
        for (TestProbe<ManagerStore.Command> store : listed) {
            register(store);
        }
        ActorRef<PoolDirectory.Command> directory =
                kit.spawn(PoolDirectory.create("shard-0", config, timings));
        for (TestProbe<ManagerStore.Command> store : listed) {
            ManagerStore.Holdings ask = store.expectMessageClass(ManagerStore.Holdings.class, Duration.ofSeconds(5));
            ask.replyTo().tell(new ManagerStore.HoldingsReply(store.ref(), List.of()));
        }
        // A starting entity stashes requests until it has rebuilt its map: this answer says it has.
        TestProbe<PoolDirectory.Found> reply = kit.createTestProbe();
        directory.tell(new PoolDirectory.Locate(new RecordKey("none", 0), reply.ref()));
        assertEquals(List.of(), reply.expectMessageClass(PoolDirectory.Found.class, Duration.ofSeconds(5)).records());
        return directory;
    }

    private void register(TestProbe<ManagerStore.Command> store) {
        TestProbe<Receptionist.Registered> ack = kit.createTestProbe();
        kit.system().receptionist().tell(Receptionist.register(ManagerStore.KEY, store.ref(), ack.ref()));
        ack.expectMessageClass(Receptionist.Registered.class);
    }

    /** A record of tenant-a with key {@code hash}, reported held by {@code holders} in that order. */
    @SafeVarargs
    private static PoolEntry heldBy(ActorRef<PoolDirectory.Command> directory, long hash,
                                    TestProbe<ManagerStore.Command>... holders) {
        PoolEntry entry = new PoolEntry(new RecordKey("tenant-a", hash), null, true, 1024);
        for (TestProbe<ManagerStore.Command> holder : holders) {
            directory.tell(new PoolDirectory.HeldAll(List.of(entry), holder.ref()));
        }
        return entry;
    }

    /** Answers the directory's question to {@code store}: it holds {@code entries} of the shard. */
    private static void answerHoldings(TestProbe<ManagerStore.Command> store, PoolEntry... entries) {
        ManagerStore.Holdings ask = store.expectMessageClass(ManagerStore.Holdings.class, Duration.ofSeconds(5));
        ask.replyTo().tell(new ManagerStore.HoldingsReply(store.ref(), List.of(entries)));
    }

    private PoolDirectory.Located locate(ActorRef<PoolDirectory.Command> directory, RecordKey key) {
        TestProbe<PoolDirectory.Found> reply = kit.createTestProbe();
        directory.tell(new PoolDirectory.Locate(key, reply.ref()));
        List<PoolDirectory.Located> found = reply.expectMessageClass(PoolDirectory.Found.class).records();
        assertEquals(1, found.size(), "the directory finds the record");
        return found.getFirst();
    }

    @Test
    void aLeavingStore_learnsTheRecordsOnlyItHolds_andTheStoresThatStay_oneNotListedYetToo_storesAreTestProbes() {
        // The third store has reported a record but no listing names it yet (the fault injected: a listing that
        // lags): it is a store like the others for a record to be handed to.
        ActorRef<PoolDirectory.Command> directory = startWith(first, second);
        PoolEntry sole = heldBy(directory, 1, first);
        PoolEntry shared = heldBy(directory, 2, first, second);
        PoolEntry elsewhere = heldBy(directory, 3, second);
        PoolEntry onThird = heldBy(directory, 4, third);
        answerHoldings(third, onThird);

        PoolDirectory.LeavingReply answer = leaving(directory, first);
        assertEquals(List.of(sole.key()), answer.keys(), "only the record no other store holds (not " + shared.key()
                + ", " + elsewhere.key() + ")");
        assertEquals(Set.of(second.ref(), third.ref()), Set.copyOf(answer.others()), "the stores that stay");
        assertEquals(false, answer.more());
        // The record the second store alone holds is short of its second replica: its copy goes to the third store,
        // never to the one that is leaving; and the leaving store is asked for no copy of what it alone holds, which
        // it hands over itself.
        ManagerStore.CopyTo copy = second.expectMessageClass(ManagerStore.CopyTo.class, RECHECK.multipliedBy(3));
        assertEquals(elsewhere.key(), copy.key());
        assertEquals(third.ref(), copy.target(), "the leaving store is no target");
        first.expectNoMessage(Duration.ofMillis(300));
    }

    @Test
    void twoStoresLeavingTogether_bothLearnTheRecordsOnlyTheyHold_andTheAnswerComesInPages_storesAreTestProbes() {
        ActorRef<PoolDirectory.Command> directory = startWith(first, second, third);
        PoolEntry onBothLeaving = heldBy(directory, 1, first, second);
        heldBy(directory, 2, second, third);
        List<RecordKey> firstAlone = new java.util.ArrayList<>();
        for (long hash = 100; hash < 100 + PoolDirectory.HAND_OFF_PAGE; hash++) {
            firstAlone.add(heldBy(directory, hash, first).key());
        }

        PoolDirectory.LeavingReply secondsAnswer = leaving(directory, second);
        assertEquals(List.of(), secondsAnswer.keys(), "while the first store stays, it holds the record too");
        PoolDirectory.LeavingReply page1 = leaving(directory, first);
        PoolDirectory.LeavingReply page2 = leaving(directory, first);
        assertEquals(PoolDirectory.HAND_OFF_PAGE, page1.keys().size());
        assertEquals(true, page1.more());
        assertEquals(1, page2.keys().size());
        assertEquals(false, page2.more());
        Set<RecordKey> handed = new java.util.HashSet<>(page1.keys());
        handed.addAll(page2.keys());
        Set<RecordKey> expected = new java.util.HashSet<>(firstAlone);
        expected.add(onBothLeaving.key());
        assertEquals(expected, handed, "each record once, the one both leaving stores hold among them");
        assertEquals(List.of(third.ref()), page2.others(), "the only store that stays");
    }

    private PoolDirectory.LeavingReply leaving(ActorRef<PoolDirectory.Command> directory,
                                               TestProbe<ManagerStore.Command> store) {
        TestProbe<PoolDirectory.LeavingReply> reply = kit.createTestProbe();
        directory.tell(new PoolDirectory.Leaving(store.ref(), reply.ref()));
        return reply.expectMessageClass(PoolDirectory.LeavingReply.class);
    }

    @Test
    void aListingThatLagsAStoresFirstReport_keepsThatStoreAsAHolder_andCopiesNothing_storesAreTestProbes() {
        ActorRef<PoolDirectory.Command> directory = startWith(first);
        RecordKey key = new RecordKey("tenant-a", 7);
        PoolEntry entry = new PoolEntry(key, null, true, 1024);

        // The second store reports before the receptionist lists it (its registration is still spreading).
        directory.tell(new PoolDirectory.HeldAll(List.of(entry), second.ref()));
        answerHoldings(second, entry);
        directory.tell(new PoolDirectory.HeldAll(List.of(entry), first.ref()));
        assertEquals(Set.of(first.ref(), second.ref()), Set.copyOf(locate(directory, key).holders()));

        // A listing comes that still lacks the second store: a third store was listed meanwhile.
        register(third);
        answerHoldings(third);

        first.expectNoMessage(Duration.ofMillis(500)); // no copy of a record both stores hold
        assertEquals(Set.of(first.ref(), second.ref()), Set.copyOf(locate(directory, key).holders()),
                "a store the listing has not reached yet still holds what it reported");
        second.expectNoMessage(Duration.ofMillis(100));
        third.expectNoMessage(Duration.ofMillis(100));
    }

    @Test
    void recordsOneStoreServed_areRefreshedOnTheirOtherHoldersOnly_inOneMessageEach_storesAreTestProbes() {
        ActorRef<PoolDirectory.Command> directory = startWith(first, second, third);
        RecordKey both = heldBy(directory, 20, first, second).key();
        RecordKey alsoThird = heldBy(directory, 21, first, third).key();
        RecordKey onlyFirst = heldBy(directory, 22, first).key();
        assertEquals(2, locate(directory, both).holders().size()); // every report above has been taken

        directory.tell(new PoolDirectory.ServedAll(List.of(both, alsoThird, onlyFirst,
                new RecordKey("tenant-a", 99)), first.ref()));

        assertEquals(new ManagerStore.Refresh(List.of(both)), second.receiveMessage(Duration.ofSeconds(5)));
        assertEquals(new ManagerStore.Refresh(List.of(alsoThird)), third.receiveMessage(Duration.ofSeconds(5)));
        first.expectNoMessage(Duration.ofMillis(200)); // the store that served counted its own use
        second.expectNoMessage(Duration.ofMillis(50));
        third.expectNoMessage(Duration.ofMillis(50));
    }

    @Test
    void withAMaxAge_theAncestorsOfRecordsTakenOrServed_areKeptFreshOnEveryHolder_storesAreTestProbes() {
        ManagerConfig oneReplica = new ManagerConfig(PoolFixture.LAYOUT, 64L * PoolFixture.LAYOUT.slotBytes(),
                Duration.ofMinutes(1), 1, 1);
        ActorRef<PoolDirectory.Command> directory = startWith(oneReplica, TIMINGS, first, second, third);
        PoolEntry root = new PoolEntry(new RecordKey("tenant-a", 30), null, true, 1024);
        PoolEntry middle = new PoolEntry(new RecordKey("tenant-a", 31), root.key(), true, 1024);
        PoolEntry leaf = new PoolEntry(new RecordKey("tenant-a", 32), middle.key(), true, 1024);

        directory.tell(new PoolDirectory.HeldAll(List.of(root), first.ref()));
        directory.tell(new PoolDirectory.HeldAll(List.of(middle), second.ref()));
        assertEquals(new ManagerStore.KeepFresh(List.of(root.key())), first.receiveMessage(Duration.ofSeconds(5)));
        directory.tell(new PoolDirectory.HeldAll(List.of(leaf), third.ref()));
        assertEquals(new ManagerStore.KeepFresh(List.of(middle.key())), second.receiveMessage(Duration.ofSeconds(5)));
        assertEquals(new ManagerStore.KeepFresh(List.of(root.key())), first.receiveMessage(Duration.ofSeconds(5)));

        directory.tell(new PoolDirectory.ServedAll(List.of(leaf.key()), third.ref()));
        assertEquals(new ManagerStore.KeepFresh(List.of(middle.key())), second.receiveMessage(Duration.ofSeconds(5)));
        assertEquals(new ManagerStore.KeepFresh(List.of(root.key())), first.receiveMessage(Duration.ofSeconds(5)));
        third.expectNoMessage(Duration.ofMillis(200)); // it holds no ancestor, and no other holder of the leaf
        first.expectNoMessage(Duration.ofMillis(50));
        second.expectNoMessage(Duration.ofMillis(50));
    }

    @Test
    void withoutAMaxAge_noAncestorIsKeptFresh_storesAreTestProbes() {
        ManagerConfig oneReplica = new ManagerConfig(PoolFixture.LAYOUT, 64L * PoolFixture.LAYOUT.slotBytes(),
                null, 1, 1);
        ActorRef<PoolDirectory.Command> directory = startWith(oneReplica, TIMINGS, first, second);
        PoolEntry root = new PoolEntry(new RecordKey("tenant-a", 40), null, true, 1024);
        PoolEntry leaf = new PoolEntry(new RecordKey("tenant-a", 41), root.key(), true, 1024);
        directory.tell(new PoolDirectory.HeldAll(List.of(root), first.ref()));
        directory.tell(new PoolDirectory.HeldAll(List.of(leaf), second.ref()));
        directory.tell(new PoolDirectory.ServedAll(List.of(leaf.key()), second.ref()));
        assertEquals(List.of(first.ref()), locate(directory, root.key()).holders()); // every message above was taken
        first.expectNoMessage(Duration.ofMillis(200));
    }

    @Test
    void aStoreThatDeregisters_isNoLongerAHolder_andItsRecordsAreCopiedFromTheOtherAtOnce() {
        ActorRef<PoolDirectory.Command> directory = startWith(first, second, third);
        PoolEntry entry = heldBy(directory, 8, first, second);
        RecordKey key = entry.key();
        assertEquals(Set.of(first.ref(), second.ref()), Set.copyOf(locate(directory, key).holders()));

        kit.system().receptionist().tell(Receptionist.deregister(ManagerStore.KEY, second.ref()));

        // At once: no copy of it can be on its way, it went with the store.
        ManagerStore.CopyTo copy = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(RECHECK.dividedBy(2)),
                "the surviving holder is asked for a copy");
        assertEquals(key, copy.key());
        assertEquals(third.ref(), copy.target(), "to the store that does not hold it");
        assertEquals(List.of(first.ref()), locate(directory, key).holders());
    }

    @Test
    void aStoreThatLeaves_isLoggedByAShardOnlyWhenRecordsOfThatShardLostAHolder_storesAreTestProbes() {
        try (LogCapture log = new LogCapture(PoolDirectory.class)) {
            ActorRef<PoolDirectory.Command> directory = startWith(first, second, third);
            PoolEntry entry = heldBy(directory, 10, first, second);
            locate(directory, entry.key());

            // The third store held nothing of this shard: its leaving is not this shard's news.
            kit.system().receptionist().tell(Receptionist.deregister(ManagerStore.KEY, third.ref()));
            first.expectNoMessage(Duration.ofMillis(500));
            // The second held the record: the shard says so, once.
            kit.system().receptionist().tell(Receptionist.deregister(ManagerStore.KEY, second.ref()));
            Awaitility.await().atMost(Duration.ofSeconds(5))
                    .until(() -> locate(directory, entry.key()).holders().equals(List.of(first.ref())));
            List<String> lines = log.infoLines();
            assertEquals(1, lines.size(), "one line, from the listing that cost a holder: " + lines);
            assertTrue(lines.getFirst().contains("1 records lost a holder that is gone"), lines.getFirst());
        }
    }

    @Test
    void aStoreThatReportedButNoListingNames_isForgottenAfterThePatience_andItsRecordsCopied_storesAreTestProbes() {
        ActorRef<PoolDirectory.Command> directory = startWith(
                new PoolDirectory.Timings(Duration.ofSeconds(2), PoolDirectory.COPY_PATIENCE, RECHECK), first, third);
        PoolEntry entry = heldBy(directory, 9, first, second);
        RecordKey key = entry.key();
        answerHoldings(second, entry);
        assertEquals(Set.of(first.ref(), second.ref()), Set.copyOf(locate(directory, key).holders()));

        // The second store never gets listed (it stopped before its registration spread).
        first.expectNoMessage(Duration.ofSeconds(1)); // still a holder within the patience
        ManagerStore.CopyTo copy = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(Duration.ofSeconds(5)), "the surviving holder is asked for a copy");
        assertEquals(third.ref(), copy.target());
        assertEquals(List.of(first.ref()), locate(directory, key).holders());
    }

    @Test
    void aStoreListedAfterTheEntityStarted_isAskedWhatItHolds_soItsOlderRecordsAreNotCopiedToIt_storesAreTestProbes() {
        ActorRef<PoolDirectory.Command> directory = startWith(first);
        PoolEntry entry = heldBy(directory, 10, first);
        RecordKey key = entry.key();

        // The second store took the record before this entity started, and the entity's rebuild did not ask it
        // (the listing then named the first store only).
        register(second);
        answerHoldings(second, entry);

        first.expectNoMessage(Duration.ofMillis(500)); // no copy of a record both stores hold
        assertEquals(Set.of(first.ref(), second.ref()), Set.copyOf(locate(directory, key).holders()));
        second.expectNoMessage(Duration.ofMillis(100));
    }

    @Test
    void aRecordOneStoreReportedFirst_isNotCopiedWhileItsOtherCopyMayBeOnItsWay_butIsOnceItStaysShort() {
        ActorRef<PoolDirectory.Command> directory = startWith(first, second);
        RecordKey arriving = new RecordKey("tenant-a", 11);
        RecordKey lost = new RecordKey("tenant-a", 12);
        PoolEntry arrivingEntry = new PoolEntry(arriving, null, true, 1024);
        PoolEntry lostEntry = new PoolEntry(lost, null, true, 1024);
        directory.tell(new PoolDirectory.HeldAll(List.of(arrivingEntry, lostEntry), first.ref()));

        directory.tell(PoolDirectory.Wake.INSTANCE); // a check of the replicas right after the first report
        first.expectNoMessage(Duration.ofMillis(500));
        // The second store's report of one of them comes; the other never reached it.
        directory.tell(new PoolDirectory.HeldAll(List.of(arrivingEntry), second.ref()));

        ManagerStore.CopyTo copy = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(RECHECK.multipliedBy(2)),
                "a record still short after the recheck is copied");
        assertEquals(lost, copy.key());
        assertEquals(second.ref(), copy.target());
        first.expectNoMessage(Duration.ofMillis(300));
    }

    @Test
    void noCopyIsMadeWhileAStoreNewToTheEntityHasNotSaidWhatItHolds_itsAnswerHeldBackByATestProbe() {
        ActorRef<PoolDirectory.Command> directory = startWith(first, second, third);
        PoolEntry entry = heldBy(directory, 13, first, second);
        RecordKey key = entry.key();

        // A fourth store is listed, which took the record meanwhile; its answer is held back a while. Then the
        // second store stops: the record would be due for a copy at once.
        TestProbe<ManagerStore.Command> fourth = kit.createTestProbe("fourth-store");
        register(fourth);
        ManagerStore.Holdings ask = fourth.expectMessageClass(ManagerStore.Holdings.class, Duration.ofSeconds(5));
        second.stop();
        first.expectNoMessage(Duration.ofMillis(500)); // it waits for the answer
        ask.replyTo().tell(new ManagerStore.HoldingsReply(fourth.ref(), List.of(entry)));

        // The answer reaches the entity through the ask's own reply actor, not in order with this test's lookups.
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(
                () -> Set.copyOf(locate(directory, key).holders()).equals(Set.of(first.ref(), fourth.ref())));
        first.expectNoMessage(RECHECK.plusSeconds(1)); // nor copied at the next check
        third.expectNoMessage(Duration.ofMillis(100));
    }

    @Test
    void aCopyAskedFor_isNotAskedForAgainWhileItMayStillBeUnderWay_evenPastARecheck_storesAreTestProbes() {
        ActorRef<PoolDirectory.Command> directory = startWith(first, second, third);
        PoolEntry entry = heldBy(directory, 14, first, second);
        RecordKey key = entry.key();
        second.stop();
        assertInstanceOf(ManagerStore.CopyTo.class, first.receiveMessage(RECHECK.dividedBy(2)));

        directory.tell(PoolDirectory.Wake.INSTANCE); // a check right after the copy was asked for
        // A word of failure from a store the copy was not asked of (an earlier ask's source) is not this copy's.
        directory.tell(new PoolDirectory.CopyFailed(key, third.ref()));
        // A copy slow past the recheck (its source has not said it failed, its target has not reported it) is not
        // asked of another store: that would leave the record with one replica more than the pool keeps.
        first.expectNoMessage(RECHECK.multipliedBy(2));
        third.expectNoMessage(Duration.ZERO);
        // Its source says it failed: it is asked for again at the next check.
        directory.tell(new PoolDirectory.CopyFailed(key, first.ref()));
        ManagerStore.CopyTo again = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(RECHECK.multipliedBy(2)));
        assertEquals(key, again.key());
    }

    @Test
    void aCopyThatFailed_isAskedOfTheNextStoreInTheRanking_notTheSameOne_storesAreTestProbes() {
        TestProbe<ManagerStore.Command> fourth = kit.createTestProbe("fourth-store");
        ActorRef<PoolDirectory.Command> directory = startWith(first, second, third, fourth);
        RecordKey key = heldBy(directory, 21, first, second).key();
        kit.system().receptionist().tell(Receptionist.deregister(ManagerStore.KEY, second.ref()));

        ManagerStore.CopyTo copy = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(RECHECK.dividedBy(2)));
        assertEquals(Placement.ranked(key, List.of(third.ref(), fourth.ref())).getFirst(), copy.target(),
                "the first ask: the store the ranking puts first");
        // The copy failed (its target's data plane cannot be reached, say): the next ask goes elsewhere.
        directory.tell(new PoolDirectory.CopyFailed(key, first.ref()));
        ManagerStore.CopyTo again = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(RECHECK.multipliedBy(2)));
        assertEquals(key, again.key());
        assertNotEquals(copy.target(), again.target(), "the second ask: not the store whose copy failed");
        assertTrue(Set.of(third.ref(), fourth.ref()).contains(again.target()), "the other listed store");
        directory.tell(new PoolDirectory.CopyFailed(key, first.ref()));
        ManagerStore.CopyTo thirdAsk = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(RECHECK.multipliedBy(2)));
        assertEquals(copy.target(), thirdAsk.target(), "round the ranking: the first store again");
    }

    @Test
    void aCopyThatFailsAtOnce_isNotAskedForAgainSoonerThanARecheckAfterTheLastAsk_storesAreTestProbes() {
        ActorRef<PoolDirectory.Command> directory = startWith(first, second, third);
        RecordKey key = heldBy(directory, 17, first, second).key();
        second.stop();
        assertInstanceOf(ManagerStore.CopyTo.class, first.receiveMessage(RECHECK.dividedBy(2)));
        long asked = System.nanoTime();
        directory.tell(new PoolDirectory.CopyFailed(key, first.ref())); // refused at once (no room, say)
        directory.tell(PoolDirectory.Wake.INSTANCE);
        ManagerStore.CopyTo again = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(RECHECK.multipliedBy(2)));
        assertEquals(key, again.key());
        assertTrue(System.nanoTime() - asked >= RECHECK.toNanos() * 9 / 10,
                "asked again " + (System.nanoTime() - asked) / 1_000_000 + " ms after the last ask");
    }

    @Test
    void aCopyThatArrived_endsTheWait_andAFailureWordAfterItAsksForNothing_storesAreTestProbes() {
        ActorRef<PoolDirectory.Command> directory = startWith(first, second, third);
        PoolEntry entry = heldBy(directory, 15, first, second);
        second.stop();
        ManagerStore.CopyTo copy = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(RECHECK.dividedBy(2)));
        assertEquals(third.ref(), copy.target(), "the only other store");
        directory.tell(new PoolDirectory.HeldAll(List.of(entry), third.ref())); // the target took it
        directory.tell(new PoolDirectory.CopyFailed(entry.key(), first.ref())); // a stale word: nothing is short
        first.expectNoMessage(Duration.ofSeconds(1));
        assertEquals(Set.of(first.ref(), third.ref()), Set.copyOf(locate(directory, entry.key()).holders()));
    }

    @Test
    void aCopyWhoseSourceSaysNothing_isAskedForAgainAfterThePatience_storesAreTestProbes() {
        ActorRef<PoolDirectory.Command> directory = startWith(
                new PoolDirectory.Timings(PoolDirectory.UNLISTED_PATIENCE, Duration.ofSeconds(1), RECHECK),
                first, second, third);
        RecordKey key = heldBy(directory, 16, first, second).key();
        second.stop();
        assertInstanceOf(ManagerStore.CopyTo.class, first.receiveMessage(RECHECK.dividedBy(2)));
        // Neither the target's report nor the source's word comes (the source went silent): a recheck past the
        // patience asks again.
        ManagerStore.CopyTo again = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(RECHECK.multipliedBy(2)));
        assertEquals(key, again.key());
    }

    @Test
    void aStoreUnreachableForAMoment_costsNoCopy_butOneUnreachableLongerHasItsRecordsCopied_listingsSentByTheTest() {
        ActorRef<PoolDirectory.Command> directory = startWith(first, second, third);
        PoolEntry entry = heldBy(directory, 15, first, second);
        RecordKey key = entry.key();
        Set<ActorRef<ManagerStore.Command>> all = Set.of(first.ref(), second.ref(), third.ref());
        Set<ActorRef<ManagerStore.Command>> withoutSecond = Set.of(first.ref(), third.ref());

        // Unreachable for a moment, then back: asked again what it holds, and nothing is copied.
        directory.tell(new PoolDirectory.StoresListed(withoutSecond, all));
        first.expectNoMessage(Duration.ofSeconds(1));
        directory.tell(new PoolDirectory.StoresListed(all, all));
        answerHoldings(second, entry);
        first.expectNoMessage(RECHECK.plusSeconds(1));

        // Unreachable for longer: its record is copied once short for the recheck, not before.
        directory.tell(new PoolDirectory.StoresListed(withoutSecond, all));
        first.expectNoMessage(RECHECK.dividedBy(2));
        ManagerStore.CopyTo copy = assertInstanceOf(ManagerStore.CopyTo.class,
                first.receiveMessage(RECHECK.multipliedBy(2)));
        assertEquals(third.ref(), copy.target());
    }
}
