package dev.selene.engine.policy;

import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotList;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.function.LongUnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The worth policy's score and order over a memory-only index: what it drops first and what it keeps. */
class WorthPolicyTest {

    private int nextSlot;
    /**
     * Whether {@link #conversations} publishes a comeback's records deepest first: the new row, then the pages above
     * it, then the record it comes back to when that was dropped.
     */
    private boolean childFirst;
    /** Blocks a comeback's turn adds: pages, then its new row (1: the row alone). */
    private int turnBlocks = 1;
    /** Whether {@link #conversations} also makes room for a step's new row before publishing it, not only after. */
    private boolean roomFirst;
    /**
     * Whether {@link #insert} checks the index's invariants (a check costs the square of the records resident:
     * {@link #conversations} checks every CHECK_EVERY steps instead).
     */
    private boolean checkEachInsert = true;
    private static final int CHECK_EVERY = 64;
    /**
     * How many shared prompts, each a record of pages, {@link #conversations} starts its conversations under (0: each
     * at a root of its own).
     */
    private int prompts;
    /** Every this many steps (0: never) a comeback publishes a second row beside its new one: a retry of the turn. */
    private int retryEvery;

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
        if (checkEachInsert) {
            index.checkInvariants();
        }
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

    /**
     * Conversations that each come back {@code wait.applyAsLong(step)} publications after their last turn, over an
     * index that holds {@code rows} rows: every step a conversation that is due comes back (its chain published again
     * from its last row, then a new row below) or a new one starts, and what is over the limit is dropped. Returns
     * how many comebacks found their last row resident, out of all comebacks, then (see below) the resumes at hot
     * prefixes, how many first turns and later turns were held back for their comeback when published, and how many
     * retries (see {@link #retryEvery}).
     */
    private int[] conversations(WorthPolicy policy, int steps, int rows, LongUnaryOperator wait) {
        return conversations(policy, steps, rows, wait, 0);
    }

    /**
     * As above, and before every step one of {@code hot} shared prefixes (a row each, taken in turn) is asked for
     * again: resumed from when resident, published again when not. The result's third figure counts the resumes at
     * them.
     */
    private int[] conversations(WorthPolicy policy, int steps, int rows, LongUnaryOperator wait, int hot) {
        RecordIndex index = new RecordIndex(true, policy, 4);
        checkEachInsert = false;
        int hotServed = 0;
        PriorityQueue<long[]> due = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
        long nextId = 1;
        int served = 0;
        int comebacks = 0;
        int patientFirst = 0;
        int patientLater = 0;
        int patientRetries = 0;
        for (long step = 0; step < steps; step++) {
            if (hot > 0) {
                long prefix = 10_000_000L + step % hot;
                RecordIndex.Entry held = index.get(key(prefix));
                if (held != null && held.spec().hasRow()) {
                    hotServed++;
                    index.touch(key(prefix), step, EvictionPolicy.Use.RESUMED);
                } else if (held == null) {
                    chain(index, null, prefix);
                }
            }
            long[] back = due.peek() != null && due.peek()[0] <= step ? due.poll() : null;
            while (roomFirst && rowsResident(index) >= rows) {
                index.dropNext();
            }
            long row = nextId++;
            if (back == null && prompts == 0) {
                chain(index, null, row);
            } else if (back == null) {
                long prompt = 20_000_000L + step % prompts;
                RecordIndex.Entry held = index.get(key(prompt));
                if (held == null) {
                    insert(index, prompt, null, false);
                }
                chain(index, prompt, row);
            } else {
                comebacks++;
                RecordIndex.Entry last = index.get(key(back[1]));
                if (last != null && last.spec().hasRow()) {
                    served++;
                    index.touch(key(back[1]), step, EvictionPolicy.Use.RESUMED);
                }
                // The request publishes its chain again from the record it comes back to, when that was dropped.
                List<RecordSpec> published = new ArrayList<>();
                if (last == null) {
                    published.add(new RecordSpec(key(back[1]), null, false));
                }
                long above = back[1];
                for (int b = 1; b < turnBlocks; b++) {
                    long page = nextId++;
                    published.add(new RecordSpec(key(page), key(above), false));
                    above = page;
                }
                published.add(new RecordSpec(key(row), key(above), true));
                for (RecordSpec spec : childFirst ? published.reversed() : published) {
                    insert(index, spec.key().hash(), spec.parent() == null ? null : spec.parent().hash(),
                            spec.hasRow());
                }
                if (retryEvery > 0 && step % retryEvery == 0) {
                    long retry = nextId++;
                    chain(index, back[1], retry);
                    patientRetries += policy.patient(index.get(key(retry))) ? 1 : 0;
                }
            }
            if (policy.patient(index.get(key(row)))) {
                if (back == null) {
                    patientFirst++;
                } else {
                    patientLater++;
                }
            }
            due.add(new long[] {step + wait.applyAsLong(step), row});
            while (rowsResident(index) > rows) {
                index.dropNext();
            }
            if (step % CHECK_EVERY == 0) {
                index.checkInvariants();
            }
            assertEquals(patientRows(policy, index), policy.heldBack(), "the rows patience counts as held back");
        }
        index.checkInvariants();
        checkEachInsert = true;
        // Each row made patient when published, or once the records above it came, counts once.
        assertEquals(patientFirst + patientLater, policy.rowsHeldBack(), "rows held back, counted once each");
        return new int[] {served, comebacks, hotServed, patientFirst, patientLater, patientRetries};
    }

    /** Resident rows droppable whole whose hold for their comeback has not ended (none is pinned here). */
    private static int patientRows(WorthPolicy policy, RecordIndex index) {
        int n = 0;
        for (RecordIndex.Entry e : index.entries()) {
            n += policy.patient(e) && !e.dropsRowOnly() ? 1 : 0;
        }
        return n;
    }

    private static int rowsResident(RecordIndex index) {
        int n = 0;
        for (RecordIndex.Entry e : index.entries()) {
            n += e.spec().hasRow() ? 1 : 0;
        }
        return n;
    }

    @Test
    void rowsThatComeBackAtARegularWait_longerThanMemoryHolds_areServedInPartByPatience_whereRecencyServesNone() {
        // Every conversation comes back 200 publications after its last turn; memory holds 60 rows.
        LongUnaryOperator regular = step -> 190 + step % 21;
        WorthPolicy policy = new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true);
        int[] patient = conversations(policy, 3_000, 60, regular);
        int[] impatient = conversations(new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, false), 3_000, 60, regular);
        assertEquals(0, impatient[0], "without patience every row is dropped before its comeback");
        assertTrue(patient[0] > patient[1] / 5, "with patience rows are held for the wait: "
                + patient[0] + " of " + patient[1] + " comebacks served");
        assertTrue(policy.patienceMemory() > WorthPolicy.PATIENCE_MEMORY, "held rows resumed from widen their room: "
                + policy.patienceMemory());
    }

    @Test
    void onlyTurnsOfConversationsThatWentOn_areHeldBack_notFirstTurns() {
        // A third of the turns end their conversation (never come back), so new conversations keep starting, each under
        // one of four shared prompts: a first turn hangs from a record, as a later turn does, but not from the end of
        // a turn before that was resumed from or came back to.
        LongUnaryOperator someEnd = step -> step % 3 == 0 ? 1_000_000 : 190 + step % 21;
        prompts = 4;
        int[] run = conversations(new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true), 3_000, 60, someEnd);
        assertEquals(0, run[3], "no first turn held back");
        assertTrue(run[4] > 100, "later turns held back: " + run[4]);
    }

    @Test
    void aTurnRetried_isABranchPoint_theRetryIsNotHeldBack() {
        // Every fifth comeback publishes a second row beside its new one, under the same turn before: that turn is
        // then a branch point, not the end of a conversation that went on.
        LongUnaryOperator regular = step -> 190 + step % 21;
        retryEvery = 5;
        int[] run = conversations(new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true), 3_000, 60, regular);
        assertTrue(run[4] > 100, "later turns held back: " + run[4]);
        assertEquals(0, run[5], "no retry held back");
    }

    @Test
    void theOrderOfArrival_doesNotChangeWhichRowsAreHeldBack() {
        // Most comebacks publish the record they come back to again (it was dropped): root first, or the new row first
        // and the records above it after, deepest first; whether the new row is held back, and for how long, is
        // decided alike, once the records up to the turn before are there. Turns of one block (the row hangs from the
        // turn before) and of three (two pages between).
        LongUnaryOperator regular = step -> 190 + step % 21;
        for (int blocks : new int[] {1, 3}) {
            turnBlocks = blocks;
            childFirst = false;
            int[] rootFirst = conversations(new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true), 3_000, 60,
                    regular);
            childFirst = true;
            int[] rowFirst = conversations(new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true), 3_000, 60,
                    regular);
            assertTrue(rootFirst[4] > 100, blocks + " blocks a turn: later turns held back: " + rootFirst[4]);
            assertEquals(rootFirst[4], rowFirst[4], blocks + " blocks a turn: as many held back");
            assertEquals(rootFirst[0], rowFirst[0], blocks + " blocks a turn: as many comebacks served");
        }
    }

    @Test
    void theRowsHeldBack_countedForTheRoomTheyTake_areThePatientOnes_whenEverMemoryMakesRoom() {
        // How many rows are held back decides whether the next one may be: it must not follow when memory last made
        // room (a node makes room for a whole publication at once, before its records arrive; the simulator record
        // by record), so a row whose hold ended stops counting at once, not at the next drop. The harness checks the
        // count against the resident patient rows after every step; here with room made after publishing, and before.
        // A third of the conversations end, so that holds end without a comeback.
        LongUnaryOperator someEnd = step -> step % 3 == 0 ? 1_000_000 : 190 + step % 21;
        int[] after = conversations(new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true), 3_000, 60, someEnd);
        roomFirst = true;
        int[] before = conversations(new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true), 3_000, 60, someEnd);
        assertTrue(after[4] > 100, "later turns held back: " + after[4]);
        assertTrue(before[4] > 100, "later turns held back: " + before[4]);
    }

    @Test
    void whatPatiencePushesOut_comingBackSoon_shrinksTheRoomHeldRowsTake_soHotPrefixesMemoryHeldStayServed() {
        // 45 shared prefixes asked for in turn, each every 45 steps: memory (60 rows) holds them and LRU serves them
        // all; conversations come back regularly after 200 steps, beyond memory. Rows held back for the conversations
        // push prefixes out, which are asked for again soon after: each such regret shrinks the room held rows may
        // take, down to its floor (2,205 of the 2,884 resumes LRU-like ranking serves, where a room fixed at its first
        // share keeps 392; the floor still costs, for 125 conversations served).
        LongUnaryOperator regular = step -> 190 + step % 21;
        WorthPolicy policy = new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true);
        int[] patient = conversations(policy, 3_000, 60, regular, 45);
        int[] impatient = conversations(new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, false), 3_000, 60, regular,
                45);
        assertTrue(patient[2] >= impatient[2] * 0.7, "prefixes served with patience " + patient[2] + ", without "
                + impatient[2]);
        assertTrue(policy.patienceMemory() < WorthPolicy.PATIENCE_MEMORY / 2, "the room held rows take shrank: "
                + policy.patienceMemory());
    }

    @Test
    void inALoopLargerThanMemory_aClassShareCountsSquared_elsewhereAsItIs() {
        // Conversations that come back after about 200 publications, memory holding 60 rows: a loop larger than
        // memory, where what separates the rows that come back from the others must weigh more than it does where
        // recency serves; the same loop in memory that holds it, and waits as spread as a memoryless return's, are not.
        LongUnaryOperator regular = step -> 190 + step % 21;
        WorthPolicy loop = new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true);
        conversations(loop, 3_000, 60, regular);
        assertTrue(loop.loop(), "a loop larger than memory");
        WorthPolicy fits = new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true);
        conversations(fits, 3_000, 400, regular);
        assertFalse(fits.loop(), "the same loop, memory holding it");
        SplittableRandom random = new SplittableRandom(7);
        long[] waits = new long[3_000];
        for (int i = 0; i < waits.length; i++) {
            waits[i] = 1 + (long) (-Math.log(1 - random.nextDouble()) * 200);
        }
        WorthPolicy memoryless = new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true);
        conversations(memoryless, 3_000, 60, step -> waits[(int) step]);
        assertFalse(memoryless.loop(), "memoryless waits");
        for (int c = 0; c < 4; c++) {
            assertEquals(Math.pow(loop.share(c), 2), loop.classWeight(c), 1e-12, "class " + c + " in the loop");
            assertEquals(memoryless.share(c), memoryless.classWeight(c), 1e-12, "class " + c + ", memoryless");
        }
    }

    @Test
    void rowsThatComeBackAtAMemorylessWait_makeNoRowPatient() {
        // Waits spread as a memoryless return's (the 90th percentile three times the median): holding rows for a
        // fixed wait would not pay, so the policy ranks as it does without patience.
        SplittableRandom random = new SplittableRandom(7);
        long[] waits = new long[3_000];
        for (int i = 0; i < waits.length; i++) {
            waits[i] = 1 + (long) (-Math.log(1 - random.nextDouble()) * 200);
        }
        LongUnaryOperator memoryless = step -> waits[(int) step];
        int[] patient = conversations(new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, true), 3_000, 60, memoryless);
        int[] impatient = conversations(new WorthPolicy(WorthPolicy.DEPTH_EXPONENT, true, false), 3_000, 60,
                memoryless);
        assertTrue(impatient[0] > 0, "some comebacks fall within what memory holds");
        assertEquals(impatient[0], patient[0], "the same comebacks served");
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

    /**
     * A class's share when every trial so far was in that class (so its novelty, turn and history over every span
     * counted the same trials): {@code resumed} successes of {@code trials}.
     */
    private static double oneGroupShare(long resumed, long trials) {
        double spanless = (resumed + 1.0) / (trials + 2.0);
        return (resumed + WorthPolicy.SHARE_PRIOR * spanless) / (trials + WorthPolicy.SHARE_PRIOR);
    }

    /** Inserts pages {@code first} to {@code first + n - 2} and a row {@code first + n - 1} under {@code parent}. */
    private void span(RecordIndex index, Long parent, long first, int n) {
        long[] ids = new long[n];
        for (int i = 0; i < n; i++) {
            ids[i] = first + i;
        }
        chain(index, parent, ids);
    }

    @Test
    void aDocumentsRow_andAShortTurnsRow_learnApart_byHowManyBlocksTheRequestAdded() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy);
        chain(index, null, 1); // a shared prompt, used: what hangs from it starts a span of its own
        index.touch(key(1), 1, EvictionPolicy.Use.RESUMED);
        for (long c = 0; c < 12; c++) {
            long turn = 1000 * (c + 1);
            chain(index, 1L, turn); // a short question whose conversation goes on: resumed from
            index.touch(key(turn), 2, EvictionPolicy.Use.RESUMED);
            span(index, 1L, turn + 100, 20); // a document of twenty blocks asked about once: dropped unused
            index.remove(key(turn + 119));
        }
        chain(index, 1L, 90_000);
        span(index, 1L, 90_100, 20);
        double question = policy.value(index.get(key(90_000)));
        double document = policy.value(index.get(key(90_119)));
        assertTrue(question > 3 * document, "the same turn, novelty and history, told apart by the span: "
                + question + " vs " + document);
        List<Long> order = drain(index);
        assertTrue(order.indexOf(90_119L) < order.indexOf(90_000L), "the newer document's row goes first: " + order);
    }

    @Test
    void aSpanCountsOnlyBlocksNoRequestUsedYet() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy);
        span(index, null, 1, 20); // twenty blocks, resumed from: every record of the chain is used
        index.touch(key(20), 1, EvictionPolicy.Use.RESUMED);
        chain(index, 20L, 21); // one block more: a short span, though twenty-one deep
        span(index, 20L, 40, 20); // twenty blocks more under the same chain: a long span
        chain(index, null, 30); // a root row of one block, resumed from, and one block under it
        index.touch(key(30), 2, EvictionPolicy.Use.RESUMED);
        chain(index, 30L, 31);
        assertEquals(policy.classOf(index.get(key(31))), policy.classOf(index.get(key(21))),
                "one new block under a used chain: the same class however deep the chain");
        assertNotEquals(policy.classOf(index.get(key(21))), policy.classOf(index.get(key(59))),
                "twenty new blocks under the same chain: another span");
        // Pages published under the resumed root row 30 and then used by a request: a row one block below them is
        // a short span, though it is nineteen blocks below the row above it.
        span(index, 30L, 70, 20);
        index.remove(key(89)); // its row goes: 88 is the pages' leaf
        index.touch(key(88), 3, EvictionPolicy.Use.REPUBLISHED);
        chain(index, 88L, 90);
        assertEquals(policy.classOf(index.get(key(31))), policy.classOf(index.get(key(90))),
                "the pages above were used before the row arrived: one new block");
    }

    @Test
    void aParentReadBackFromDisk_addsNothingToTheSpanOfTheRowBelowIt() {
        List<Integer> classes = new ArrayList<>();
        for (boolean fromDisk : new boolean[] {false, true}) {
            WorthPolicy policy = byWorth();
            RecordIndex index = new RecordIndex(false, policy);
            chain(index, null, 1); // a root row, resumed from
            index.touch(key(1), 1, EvictionPolicy.Use.RESUMED);
            insert(index, 10, 9L, true); // a row whose eight pages above arrive after it
            for (long k = 2; k <= 9; k++) {
                index.insert(new RecordSpec(key(k), key(k - 1), false), SlotList.of(nextSlot++), fromDisk, 0);
                index.checkInvariants();
            }
            classes.add(policy.classOf(index.get(key(10))));
        }
        WorthPolicy reference = byWorth();
        RecordIndex index = new RecordIndex(false, reference);
        chain(index, null, 1);
        index.touch(key(1), 1, EvictionPolicy.Use.RESUMED);
        chain(index, 1L, 10);
        int oneBlock = reference.classOf(index.get(key(10)));
        assertEquals(oneBlock, (int) classes.get(1), "pages read back from disk are no part of the request's span");
        assertNotEquals(oneBlock, (int) classes.get(0), "pages published with it (arriving late) are: nine blocks");
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
        assertEquals(oneGroupShare(4, 4), policy.share(novelRootClass), 1e-12);
        for (long r = 11; r <= 20; r++) { // ten more, not resumed from yet (their next turn has not come)
            chain(index, null, r);
        }
        assertEquals(oneGroupShare(4, 4), policy.share(novelRootClass), 1e-12, "open trials are not failures");
        index.remove(key(11));
        index.remove(key(12));
        assertEquals(oneGroupShare(4, 6), policy.share(novelRootClass), 1e-12, "two dropped unused: two failures");
        index.touch(key(13), 30, EvictionPolicy.Use.RESUMED);
        assertEquals(oneGroupShare(5, 7), policy.share(novelRootClass), 1e-12, "one resumed from: a success");
    }

    @Test
    void aRowDroppedApartFromItsPages_endsItsTrialAsAFailure_andItsRecordsRemovalDoesNotCountItAgain() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy, 4); // a row record: 1 page slot, then 4 row slots
        int novelRootClass = 1;
        chain(index, null, 1); // a root row, unused: a novel chain
        chain(index, 1L, 2, 3); // a row two blocks below (worth more): novel too, a span of two blocks
        boolean rowDroppedApart = false;
        for (RecordIndex.Dropped d = index.dropNext(); d != null; d = index.dropNext()) {
            rowDroppedApart |= !d.whole();
            index.checkInvariants();
        }
        assertTrue(rowDroppedApart, "the root's row went before its pages");
        // One failure in the root's class, two in the classes of its novelty, turn and history over every span.
        double spanless = (0 + 1.0) / (2 + 2);
        assertEquals(WorthPolicy.SHARE_PRIOR * spanless / (1 + WorthPolicy.SHARE_PRIOR), policy.share(novelRootClass),
                1e-12, "two trials ended, both failures, each once");
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
    void theDuelsSamples_decideUntilTheShadowSpeaks_andTheOthersFollowTheOneResumedMore() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy);
        long worthKey = keyInSet(0, 1);
        long recencyKey = keyInSet(1, 1);
        long followerKey = keyInSet(5, 1);
        assertEquals(WorthPolicy.Verdict.UNDECIDED_RECENCY, policy.verdict());
        assertTrue(policy.byWorth(key(worthKey)));
        assertFalse(policy.byWorth(key(recencyKey)));
        assertFalse(policy.byWorth(key(followerKey)), "with no resumes yet, the others are ranked by recency");
        // Rows of the worth sample get resumed from: the others follow it.
        for (long k = keyInSet(0, 1000), n = 0; n < 3; k = keyInSet(0, k + 1), n++) {
            chain(index, null, k);
            index.touch(key(k), 1, EvictionPolicy.Use.RESUMED);
        }
        assertEquals(WorthPolicy.Verdict.UNDECIDED_WORTH, policy.verdict());
        assertTrue(policy.byWorth(key(followerKey)));
        assertFalse(policy.byWorth(key(recencyKey)), "the recency sample keeps its ranking");
        // Then rows of the recency sample, more often: the others go back to recency.
        for (long k = keyInSet(1, 1000), n = 0; n < 4; k = keyInSet(1, k + 1), n++) {
            chain(index, null, k);
            index.touch(key(k), 1, EvictionPolicy.Use.RESUMED);
        }
        assertFalse(policy.byWorth(key(followerKey)));
        assertTrue(policy.byWorth(key(worthKey)), "the worth sample keeps its ranking");
    }

    @Test
    void theShadowsVerdict_overrulesTheSamples_onceOneSideLeadsSignificantly() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy);
        long[] keys = followerKeys(8);
        for (long k : keys) {
            chain(index, null, k);
        }
        // Rows this policy dropped and the shadow LRU cache still holds are published again: points for recency.
        for (int i = 0; i < 5; i++) {
            index.remove(key(keys[i]));
            chain(index, null, keys[i]);
            assertEquals(i == 4 ? WorthPolicy.Verdict.RECENCY : WorthPolicy.Verdict.UNDECIDED_RECENCY,
                    policy.verdict(), "4 points against none are 2 standard deviations, not more: " + (i + 1));
        }
        assertFalse(policy.byWorth(key(keys[7])));
        assertTrue(policy.byWorth(key(keyInSet(0, 1))), "the worth sample keeps its ranking");
        assertEquals(1.0 / 7, policy.value(index.get(key(keys[7]))), 1e-12,
                "every row the same value: the share of all ended trials (5 dropped unused)");
        // A resume at a row the shadow no longer holds (it dropped the oldest to make room): a point for worth, and
        // the lead (5 against 1) is no longer significant.
        index.remove(key(keys[4]));
        chain(index, null, keyInSet(2, keys[7] + 1));
        index.touch(key(keys[5]), 1, EvictionPolicy.Use.RESUMED);
        assertEquals(WorthPolicy.Verdict.UNDECIDED_RECENCY, policy.verdict());
    }

    @Test
    void aLeadForWorthInTheShadow_notYetSignificant_isEnoughForTheOthersToFollowWorth() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy);
        long[] keys = followerKeys(9);
        for (int i = 0; i < 8; i++) {
            chain(index, null, keys[i]);
        }
        assertEquals(WorthPolicy.Verdict.UNDECIDED_RECENCY, policy.verdict());
        // The cache drops one row and takes a new one; the shadow, as large as the most memory held, drops its least
        // recently used key instead, which the cache still holds: a resume there is one only this policy served.
        index.remove(key(keys[7]));
        chain(index, null, keys[8]);
        index.touch(key(keys[0]), 1, EvictionPolicy.Use.RESUMED);
        assertEquals(WorthPolicy.Verdict.UNDECIDED_WORTH, policy.verdict(), "one point against none: a slight lead");
        assertTrue(policy.byWorth(key(keys[1])));
        assertFalse(policy.byWorth(key(keyInSet(1, 1))), "the recency sample keeps its ranking till the shadow speaks");
    }

    @Test
    void theShadowDuel_countsAChainPublishedAgain_once() {
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
            assertEquals(c == 4, policy.verdict() == WorthPolicy.Verdict.RECENCY,
                    "a point per chain, not per row: " + (c + 1));
        }
    }

    /**
     * Publishes records {@code from} to {@code to} of conversation {@code c}: five records 10c+1 to 10c+5 in a chain,
     * three turns with a row at each turn's end (records 1, 3 and 5) and pages between.
     */
    private void conversationRecords(RecordIndex index, long c, long from, long to) {
        for (long k = from; k <= to; k++) {
            insert(index, 10 * c + k, k == 1 ? null : 10 * c + k - 1, k % 2 == 1);
        }
    }

    /** Drops conversation {@code c} whole from the cache, leaf first (the shadow keeps it). */
    private static void dropConversation(RecordIndex index, long c) {
        for (long k = 5; k >= 1; k--) {
            index.remove(key(10 * c + k));
        }
    }

    @Test
    void aConversationPublishedAgain_isOnePointForTheShadow_thoughItHoldsARowAtEveryTurn() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy);
        for (long c = 0; c < 5; c++) {
            conversationRecords(index, c, 1, 5);
        }
        for (long c = 0; c < 5; c++) {
            // The cache dropped the conversation whole; the shadow holds it, rows included; its next turn publishes
            // it again from its root: one request the shadow would have served deeper, however many rows it passes.
            dropConversation(index, c);
            conversationRecords(index, c, 1, 5);
            assertEquals(c == 4, policy.verdict() == WorthPolicy.Verdict.RECENCY,
                    "a point per request, not per row: " + (c + 1));
        }
    }

    @Test
    void twoRequestsWhoseRecordsArriveInterleaved_areAPointEach() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy);
        for (long c = 0; c < 5; c++) {
            conversationRecords(index, c, 1, 5);
        }
        // Conversations 0 and 1, then 2 and 3, published again together, their records alternating: the shadow
        // would have served each deeper, one point each (counted by arrival, each record would start a request).
        for (long pair = 0; pair < 2; pair++) {
            long a = 2 * pair;
            long b = a + 1;
            dropConversation(index, a);
            dropConversation(index, b);
            for (long k = 1; k <= 5; k++) {
                conversationRecords(index, a, k, k);
                conversationRecords(index, b, k, k);
            }
            assertNotEquals(WorthPolicy.Verdict.RECENCY, policy.verdict(), "two points per pair: " + (pair + 1));
        }
        dropConversation(index, 4);
        conversationRecords(index, 4, 1, 5);
        assertEquals(WorthPolicy.Verdict.RECENCY, policy.verdict(), "the fifth request's point turns the verdict");
    }

    @Test
    void twoRequestsResumedFromOneSharedRow_eachKeepTheirPoint_whenTheirRecordsFollow() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy);
        long p = 1;
        long c = 4;
        long d = 5;
        insert(index, p, null, true);
        insert(index, 2, null, true);
        insert(index, 3, null, true);
        insert(index, c, p, true);
        insert(index, d, p, true);
        for (long k : new long[] {2, 3, c, d}) { // the cache keeps the shared row alone; the shadow holds all five
            index.remove(key(k));
        }
        insert(index, 6, null, true); // pushes the shared row, least recently used, out of the shadow
        // Two requests resume from the shared row: the first served deeper than the shadow would have (a point for
        // worth), the second as deep (the first brought the row back into the shadow).
        index.touch(key(p), 1, EvictionPolicy.Use.RESUMED);
        index.touch(key(p), 2, EvictionPolicy.Use.RESUMED);
        assertArrayEquals(new double[] {1, 0}, policy.duelPoints());
        // Each publishes a record the shadow still held with a row: both would have been served deeper by the
        // shadow, so the first request's point moves to recency and the second's goes there: none left for worth.
        insert(index, c, p, true);
        insert(index, d, p, true);
        assertArrayEquals(new double[] {0, 2}, policy.duelPoints());
    }

    @Test
    void recordsReadBackFromDisk_areNoRequestOfTheirOwn() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy);
        for (long c = 0; c < 5; c++) {
            insert(index, 10 * c + 1, null, true);
        }
        // Each row goes and comes back from disk while the shadow holds it: no request published it, so no point.
        for (long c = 0; c < 5; c++) {
            index.remove(key(10 * c + 1));
            index.insert(new RecordSpec(key(10 * c + 1), null, true), SlotList.of(nextSlot++, nextSlot++), true, 0);
        }
        assertNotEquals(WorthPolicy.Verdict.RECENCY, policy.verdict());
        // Published again instead (not on disk), the same five turn the verdict to recency.
        for (long c = 0; c < 5; c++) {
            index.remove(key(10 * c + 1));
            insert(index, 10 * c + 1, null, true);
        }
        assertEquals(WorthPolicy.Verdict.RECENCY, policy.verdict());
    }

    @Test
    void whenTheVerdictChanges_rowsRankedBeforeAreRankedAgain_theLeastRecentlyUsedFirst() {
        WorthPolicy policy = new WorthPolicy();
        RecordIndex index = new RecordIndex(true, policy);
        long sampled = keyInSet(0, 1000); // a row of the worth sample resumed from: the others follow worth
        chain(index, null, sampled);
        index.touch(key(sampled), 1, EvictionPolicy.Use.RESUMED);
        assertEquals(WorthPolicy.Verdict.UNDECIDED_WORTH, policy.verdict());
        // An older row at the end of a three-record chain is worth more than a newer root row of its class.
        long deep = keyInSet(2, 100);
        long root = keyInSet(3, deep + 1);
        insert(index, 1, null, false);
        insert(index, 2, 1L, false);
        insert(index, deep, 2L, true);
        insert(index, root, null, true);
        assertTrue(policy.value(index.get(key(deep))) > policy.value(index.get(key(root))), "ranked by worth");
        // Five rows dropped and published again while the shadow held them: the verdict turns to recency.
        for (long i = 0, k = keyInSet(4, root + 1); i < 5; i++, k = keyInSet(4, k + 1)) {
            chain(index, null, k);
            index.remove(key(k));
            chain(index, null, k);
        }
        assertEquals(WorthPolicy.Verdict.RECENCY, policy.verdict());
        assertEquals(deep, index.dropColdest().key().hash(),
                "ranked again by recency, the older row goes first, though nothing used it since");
    }

    @Test
    void whenAClassesShareMovesByHalf_itsRowsAreRankedAgain_withTheShareTheyHaveNow() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy);
        for (long k = 10; k <= 13; k++) { // new chains resumed from: their class's share is 11/12
            chain(index, null, k);
            index.touch(key(k), 1, EvictionPolicy.Use.RESUMED);
        }
        assertEquals(11.0 / 12, oneGroupShare(4, 4), 1e-12);
        chain(index, null, 20); // a new chain, ranked at 11/12
        chain(index, 10L, 21); // a turn on a chain that went on: a class of its own, at the prior 1/2
        assertTrue(policy.value(index.get(key(20))) > policy.value(index.get(key(21))));
        for (long k = 30; k < 40; k++) { // ten new chains that leave unused: the share of new chains sinks to 7/24
            chain(index, null, k);
            index.remove(key(k));
        }
        assertEquals(7.0 / 24, oneGroupShare(4, 14), 1e-12);
        assertEquals(7.0 / 24, policy.value(index.get(key(20))), 1e-12);
        assertEquals(20, index.dropColdest().key().hash(), "ranked again at 7/24, below the turn's 1/2");
    }

    @Test
    void whenTheSharesOfAClassesGroupMove_itsRowsAreRankedAgain_thoughNoTrialOfItsOwnEnded() {
        WorthPolicy policy = byWorth();
        RecordIndex index = new RecordIndex(true, policy);
        for (long k = 10; k <= 13; k++) { // one-block chains resumed from: their group's share is 5/6
            chain(index, null, k);
            index.touch(key(k), 1, EvictionPolicy.Use.RESUMED);
        }
        span(index, null, 100, 20); // a new chain of twenty blocks: another span, the same group, no trial of its own
        chain(index, 10L, 21); // a turn on a chain that went on: another group, at the prior 1/2
        int novelRootClass = 1; // where the one-block chains' trials were counted
        assertNotEquals(novelRootClass, policy.classOf(index.get(key(119))), "twenty blocks and one: two classes");
        assertEquals(5.0 / 6, policy.share(policy.classOf(index.get(key(119)))), 1e-12, "its group's share");
        assertTrue(policy.value(index.get(key(119))) > policy.value(index.get(key(21))));
        for (long k = 30; k < 40; k++) { // ten one-block chains that leave unused: the group's share sinks to 5/16
            chain(index, null, k);
            index.remove(key(k));
        }
        assertEquals(5.0 / 16, policy.share(policy.classOf(index.get(key(119)))), 1e-12);
        assertEquals(119, index.dropColdest().key().hash(), "ranked again at its group's 5/16, below the turn's 1/2");
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
    void aRowOthersHangFrom_isRankedByWorth_evenInTheDuelsRecencySample() {
        long interior = keyInSet(1, 1);
        long child = keyInSet(2, interior + 1);
        List<Double> values = new ArrayList<>();
        for (WorthPolicy policy : List.of(new WorthPolicy(), byWorth())) {
            RecordIndex index = new RecordIndex(true, policy, 4);
            insert(index, 100, null, false);
            insert(index, 101, 100L, false);
            insert(index, interior, 101L, true);
            insert(index, child, interior, true);
            assertTrue(index.get(key(interior)).dropsRowOnly());
            values.add(policy.value(index.get(key(interior))));
        }
        assertFalse(new WorthPolicy().byWorth(key(interior)), "the key is in the recency sample");
        assertEquals(values.get(1), values.get(0), "ranked by its worth there too, not by the recency constant");
        assertTrue(values.get(0) != 0.25, "the recency constant with two rows and no resume would be 0.25");
    }

    /** {@code n} increasing keys outside the duel's samples, so that resumes at them leave the samples' counter. */
    private static long[] followerKeys(int n) {
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            keys[i] = keyInSet(2 + i % 3, i == 0 ? 1 : keys[i - 1] + 1);
        }
        return keys;
    }

    /** The first key from {@code from} on whose duel set is {@code set}. */
    private static long keyInSet(int set, long from) {
        long k = from;
        while (WorthPolicy.duelSet(key(k)) != set) {
            k++;
        }
        return k;
    }
}
