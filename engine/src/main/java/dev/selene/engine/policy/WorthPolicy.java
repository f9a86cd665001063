package dev.selene.engine.policy;

import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Ranks droppable records by what keeping them is worth: how likely a request is to resume at them, times the prefill
 * a resume saves, per slot they hold, with recency breaking ties; the least worth goes first. A duel against a shadow
 * LRU cache of keys, and between two small samples of rows while the shadow has no clear verdict, decides whether rows
 * are ranked this way or by recency alone.
 *
 * <pre>
 * priority(r) = base(r) + value(r)         drop the lowest; base(r) = L at r's last use; L = last dropped priority
 * value(r)    = a row record ranked by worth:   w(class(r)) × saved(r) × slotsOfARow / slots(r)
 *               a row record ranked by recency: p(every row), the same for all, so recency alone orders them
 *               a page-only leaf that was a parent, unused since: 0 (nothing can end a match there)
 *               any other page-only record:     saved(r) × slotsOfARow / slots(r)
 * saved(r)    = (depth(r) - depth of the deepest row above r) ^ DEPTH_EXPONENT: the blocks a resume at r serves
 *               beyond the row a request would fall back to without r
 * class(r)    = (novel, turn, history, span)     novel: r starts a chain or extends one nobody used since it was
 *               published; turn: rows above r that were resumed from before r arrived (0, 1, 2+: how far a
 *               conversation has gone); history: how often r's key was published or resumed from before (0, 1, 2+,
 *               from a frequency sketch that outlives the record); span: the run of records up r's chain, r included,
 *               each unused by any request (and not read back from disk) when the record below it arrived, in blocks
 *               (1, 2-3, 4-7, 8-15, 16-31, 32+: what the request added, a message or a document); a row added to
 *               r later, or r resumed, keeps the span r arrived with
 * p(c)        = (resumed + SHARE_PRIOR × q(c)) / (trials + SHARE_PRIOR) over the ended trials of c: a row's trial
 *               in the class it entered ends when a request resumes from it (a success) or when it is dropped (a
 *               failure); q(c) = (resumed + 1) / (trials + 2) over the ended trials of every class with c's novelty,
 *               turn and history, whatever the span: a class with few trials starts from its spanless share
 * w(c)        = p(c), or p(c) ^ LOOP_SHARE_EXPONENT while the requests look like a loop larger than memory: the
 *               waits before a row's comeback cluster (as for patience, over LOOP_MIN_WAITS waits at least) and
 *               requests come back to dropped rows more often than rows are resumed while held
 * duel        = each request is compared with a shadow LRU cache of keys as large as memory: a point to the side
 *               that would serve it deeper (this policy: the row the request resumed from; the shadow: the
 *               deepest record of the request it holds with a row, above that row or among the records the request
 *               then publishes), none when both serve as deep; when one count leads by more than DUEL_Z
 *               standard deviations of the difference, rows are ranked by that side; until then rows whose key
 *               falls in sample set 0 are ranked by worth, set 1 by recency, and the others by worth while set 0's
 *               rows have been resumed from more often than set 1's or the shadow leans to worth (more points for
 *               worth than for recency, significant or not); set 0 is always ranked by worth; the verdict is taken
 *               again as a row is published and as a request resumes
 * again       = when the verdict changes, or a class's share moves by more than SHARE_DRIFT since its rows were
 *               ranked, the rows concerned are ranked again with the value they have now
 * patience    = rows dropped unused are remembered (a ghost of GHOST_FACTOR times the most rows ever resident);
 *               once requests come back to them LATE_RATIO times as often as rows are resumed while held, and the
 *               waits before a row's comeback cluster (90th percentile at most REGULAR times the median), new rows
 *               of conversations that went on (the row above was resumed from or came back, and nothing else hung
 *               from it since it arrived) are held back from dropping for PATIENCE_MARGIN times the 90th percentile
 *               of the waits, while the rows held back are fewer than a share of the rows resident; the share starts at
 *               PATIENCE_MEMORY and moves by PATIENCE_STEP, up for each held row resumed from, down for each record
 *               dropped while rows were held back and published again within as many rows as are held back (what
 *               the held rows' room would have served), between PATIENCE_MEMORY_MIN and PATIENCE_MEMORY_MAX
 * </pre>
 */
public final class WorthPolicy implements EvictionPolicy {

    /*
     * Design
     *
     * What a kept row is worth. A row is large and fixed in size (a qwen-tp1 row is four times its record's pages),
     * useful only at its exact position, and most rows of a chat workload are never resumed from: one-off questions,
     * the last turn of a conversation. Marconi [1] keeps the recurrent states of hybrid models, which are exactly such
     * rows, by the prefill compute a hit saves per byte held, combined with recency, and admits states by where they
     * sit (branch points, a conversation's input and output). We combine with GreedyDual [2]: a record's priority is
     * the inflation L at its last use plus its value, L rises to each dropped record's priority, so a record outlives
     * cheaper ones by its value but not for ever, and among equals the least recently used goes first. A row that
     * will likely not be resumed (a class that rarely is) gets a small value and goes soon after it arrives: the
     * admission filter, without refusing any publication.
     *
     * Saving. In a memory-only node only leaves are dropped, so dropping a leaf row leaves the deepest row above it
     * in place, and the request that would have resumed at the leaf resumes there instead: what the leaf saves is the
     * depth between the two. Its weight, DEPTH_EXPONENT, was measured on the traces the comparison marks as tuned on
     * (the largest mean gain over LRU with no loss above half a point; docs/replay.md): counting the whole depth
     * (Marconi's prefill FLOPs) or the marginal depth at exponent 1 keeps deep rows of finished conversations too
     * long and loses to LRU on agent loops (docs/replay.md has the figures); at 0.1 it still prefers a long turn to
     * a short one among rows alike otherwise. Slots matter between rows and pages: a page-only record being
     * published holds a fifth of a row's slots.
     *
     * Probability. Learnt per class, as the reuse policy does [3]: the share of rows of a class that were resumed
     * from, here over trials that have ended (a row resumed from, or gone unused). The classes are Marconi's
     * taxonomy of where states are reused, in terms a host tier observes: a conversation's end (turn: a row on a
     * chain whose earlier rows were resumed; the conversation went on before), the start of new chains (novel), keys
     * seen again (history: a shared prefix asked about again), and how much the request added above the prefix it
     * shared (span: a chat turn adds a message and an answer, a one-off question about a document adds the
     * document). The span tells apart what turn and novelty cannot: in a workload where one-off requests bring long
     * documents and conversations go on in short turns, a document's row and a conversation's first row look alike
     * otherwise, and the documents' rows, never resumed, fill memory; where one-off requests and first turns are
     * drawn alike the spans' shares come out alike and the split costs only slower learning, which the prior keeps
     * small: a class's share starts from the share of its rows' novelty, turn and history over every span and moves
     * to its own as its trials outnumber SHARE_PRIOR. Its bounds are powers of SPAN_BASE in blocks (1, 2-3, 4-7,
     * 8-15, 16-31, 32+: a message and a document of a few thousand tokens fall in different bands); on traffic whose
     * working set is several times memory, powers of two with the prior gained 0.7-1.1 points over LRU against powers
     * of four with a flat prior on families added after the choice, and the tuned-on rows did not move
     * (docs/replay.md has the figures).
     *
     * Duel. Where the working set nearly fits, recency is the best predictor and any reordering by noisy class shares
     * loses hits. The choice is adaptive, as in ARC's ghost lists [5] and set dueling [4]. The judge is a shadow LRU
     * cache of keys and slot counts, as large as the most memory ever held, that hears every publication and use. Each
     * request is one point, to the side that would serve it deeper: this policy serves the row the request resumed
     * from, the shadow the deepest record of the request it holds with a row (the records above that row, and those
     * the request then publishes again, which hang from it one by one). A request is one point however many rows it
     * passes: counted per record published again, a conversation the cache dropped whole counted once per turn, and a
     * cache as good as LRU lost the duel to its own shadow (48 to 27 points on a trace where both served 13%). A point
     * for worth moves to recency when the request's later records show the shadow would have served deeper. Both
     * sides see the same requests, so the comparison is paired; once one side leads by more than DUEL_Z standard
     * deviations of the difference (a count of n points has a spread of sqrt(n) when both are equally good), every row
     * but set 0's follows it. The counts are halved once they pass DUEL_WINDOW, so the verdict follows the workload.
     *
     * The shadow is slow to speak: its points come only where the cache and the shadow differ, tens in a trace of
     * thousands of requests. Until it does, two samples of rows decide, as in set dueling: set 0 always ranked by worth
     * (so that worth keeps earning points whatever the others do), set 1 by recency, and the others by worth while set
     * 0's rows have been resumed from more often than set 1's, or while the shadow leans to worth without a significant
     * lead yet (the samples alone made the synthetic trace serve 32-37% over ten hash salts, with the shadow's lean
     * 36-37%). So with no evidence at all rows are ranked by recency: a memory-only node whose warm tier holds one run
     * of a workload keeps the newer run whole, where rows ranked by worth from the start, on class shares learnt from a
     * few tens of trials, lost a conversation of the second run in 6 of 90 served runs. The samples are small and noisy
     * (on the synthetic trace the followers' ranking depends on which keys fall in them), and a recency sample costs:
     * its rows live as long as an average row, where most rows ranked by worth go soon; both are why the shadow
     * overrules them once it has spoken.
     *
     * Ranked again. A record's value is fixed when it is ranked, but what it was computed from moves: the duel's
     * verdict, and the class shares, which swing widely while a class has had few trials. Rows ranked under an old
     * verdict, or while their class's share was far from what it is now, would otherwise outlive or leave before
     * rows ranked since for no reason the workload supports. So when the verdict changes the rows it ranks
     * are ranked again, and when a class's share has moved by more than SHARE_DRIFT its rows are; each keeps its
     * base and its place among equals. Both are rare: a verdict changes a few times in a trace, a share by half
     * a few times in a class's life.

     * Patience. Recency and worth both let a row go once newer or worthier rows need its slots. When every conversation
     * comes back after about the same wait and memory holds less than that wait's rows, each row goes just before its
     * comeback: LRU serves nothing (the loop every recency policy loses), no trial ever succeeds, every class's share
     * sinks to its floor, worth ranks by recency too, and the shadow, no larger than memory, sees nothing either side
     * could have served. The oracle keeps some of the conversations for their whole wait and lets the others go. The
     * remedy is the one for loops in CPU caches and scan-resistant policies (a part of what arrives held, the rest
     * passing through): rows dropped unused are remembered, so that a request reaching one later counts as a comeback
     * memory did not hold, with its wait; when comebacks outnumber resumes of held rows several times over and their
     * waits cluster, new rows are held back for the wait. Waits that do not cluster (a memoryless return's 90th
     * percentile is 3.3 times its median) leave the policy as it was: a row held for a fixed wait is then no likelier
     * to be resumed than one ranked by worth, and on agent loops at small memory patience without that test lost 2.8
     * points to LRU. Which rows: those of conversations already seen to go on (the row above was resumed from, or a
     * request came back to it after it was dropped), as a conversation that went on once is likelier to go on again
     * than a first turn, two thirds of which are one-off questions in the shared-prompt families; the first cut held a
     * sample by key and served 0.51-0.66 of the oracle there, these 0.68-0.78. How many: while fewer are held back
     * than a share of the rows resident, a share that follows what the held rows serve against what their room would
     * have (ARC's adaptation [5]): up a step for each held row resumed from, down a step for each record dropped
     * while rows were held back that is published again within as many rows as are held back (a shared prefix
     * memory held before). The share is bounded: with no bound nothing but pages is left to drop and the hit ratio
     * falls to about LRU's, at 0.95 that family served 0.62-0.72 of the oracle against 0.68-0.78 at 0.9 (the bounds
     * and the step were chosen on its seeds 6, 8, 11, 29, 44, 48 and 51). At its floor patience still costs where its
     * room is worth more: at most 0.13 of the oracle on regular turns over 32 shared prompts, and 23% of the resumes
     * of hot prefixes that just fit beside conversations coming back beyond memory (a unit test's case). A veto that
     * stopped patience when regrets outnumbered held rows resumed from (the cut before) protected those prefixes
     * better, but fired early in runs where patience pays: regrets come at once, resumes only a wait later.

     * Order of arrival. A publication's records may become resident in any order; a record whose parent is not
     * resident yet is taken as a root until the parent arrives, and is then settled with what hangs from it (its
     * rank, and whether its row is held back, decided once the records up to the turn before are there), so the
     * order does not change the ranking. Nor does the moment memory makes room (a node for a whole publication before
     * its records arrive, the simulator record by record): rows whose hold is over are released as the clock moves,
     * not when the next victim is chosen, so how many are held back when a row arrives is the same either way; and
     * the duel's verdict, which records published again move, is taken again only as the clock moves or a request
     * resumes, not between a publication's records. The duel's points follow the chains: a request is the records
     * that hang one from the next after its resume, followed by its last record, so requests whose records arrive
     * interleaved keep a point each (requests resumed from one shared row are told apart only by count: a record
     * hanging from that row continues the latest of them, which may swap two requests' records but starts none anew);
     * a record that arrives before its parent starts a request of its own and may count a second point; a record read
     * back from disk is no part of one, and reaches the shadow only with the use that follows. A node and the
     * simulator agree to four digits where patience acts too, on the traces measured (docs/replay.md lists one where
     * they do not: ranks taken while a record is pinned).
     *
     * Rows apart from pages. With memory only, the row of a record others hang from (a conversation's earlier turn) is
     * ranked on its own and may be dropped while its pages stay for the records below. Such a row is always ranked
     * by worth (ranked by recency alone it goes as soon as it is cold, and a shared prompt's row, resumed from only
     * now and then, would go with it), and its base is refreshed when a record below it is used: while its chain is
     * alive a retry or a branch may come back to it.
     *
     * Limits. Only droppable records are ranked (memory only: leaves and the rows above others; with a durable tier,
     * clean records, whole). The shadow LRU cache costs a map entry per record it holds: at most one per slot of the
     * most memory ever held, in practice about as many as the index holds. It orders keys by their last use alone,
     * where LRU drops leaves only, so its verdict is an estimate.
     *
     * [1] Pan et al., Marconi: Prefix Caching for the Era of Hybrid LLMs, MLSys 2025.
     * [2] Cao and Irani, Cost-aware WWW proxy caching algorithms (GreedyDual-Size), USENIX 1997.
     * [3] Beckmann et al., LHD: Improving Cache Hit Rate by Maximizing Hit Density, NSDI 2018.
     * [4] Qureshi et al., Adaptive Insertion Policies for High Performance Caching, ISCA 2007.
     * [5] Megiddo and Modha, ARC: A Self-Tuning, Low Overhead Replacement Cache, FAST 2003.
     */

    /** The name settings use. */
    public static final String NAME = "worth";

    /** How the saving of a resume grows with its depth in blocks: saved(d) = d ^ DEPTH_EXPONENT. */
    static final double DEPTH_EXPONENT = 0.1;
    /** Highest history a class tells apart. */
    static final int MAX_HISTORY = 2;
    /** Highest turn a class tells apart. */
    static final int MAX_TURN = 2;
    /** Trials of a class after which its counts are halved. */
    static final int COUNT_HALF_LIFE = 4096;

    /** The shadow LRU's verdict holds once one side leads by more than this many standard deviations. */
    static final double DUEL_Z = 2;
    /** The shadow duel's two counts are halved once together they pass this many points. */
    static final int DUEL_WINDOW = 512;
    /** Sample sets of the duel, by key: set 0 is ranked by worth, set 1 by recency until the shadow speaks. */
    static final int DUEL_SETS = 16;
    /** The samples' counter saturates at plus or minus this many resumes. */
    static final int DUEL_LIMIT = 256;
    /** Records the duel follows requests at (records of several may arrive interleaved); more than requests in flight. */
    static final int OPEN_REQUESTS = 1024;
    /** Requests the duel follows at one record (several resumed from one shared row, their records yet to come). */
    static final int REQUESTS_AT_ONE = 8;
    /** A class's rows are ranked again once its share has moved by more than this factor since they were. */
    static final double SHARE_DRIFT = 1.5;
    /** Mixed into a key before its duel set is taken, so the sets do not follow other uses of the key's hash. */
    private static final long DUEL_SALT = 0x5DEECE66DL;

    /** Spans a class tells apart: what a request added above a row, in blocks, 1, 2-3, 4-7, 8-15, 16-31, 32+. */
    static final int SPANS = 6;
    /** Each span's bound is this many times the last one's. */
    static final int SPAN_BASE = 2;
    /** Classes without the span: novelty, turn and history. */
    private static final int SPANLESS = 2 * (MAX_TURN + 1) * (MAX_HISTORY + 1);
    private static final int CLASSES = SPANLESS * SPANS;
    /** How many trials a class's spanless share weighs as, in the class's own share. */
    static final double SHARE_PRIOR = 4;

    /** Dropped rows remembered, as many times the most rows ever resident, to see requests come back to them. */
    static final int GHOST_FACTOR = 8;
    /** Patience starts once rows come back after they were dropped this many times as often as while held. */
    static final double LATE_RATIO = 3;
    /** ... and once at least this many came back late. */
    static final int LATE_MIN = 32;
    /** The share of the rows resident that held-back rows may take, at first. */
    static final double PATIENCE_MEMORY = 0.3;
    /** ... at least, however much the rows held back push out that comes back soon. */
    static final double PATIENCE_MEMORY_MIN = 0.1;
    /** ... at most: memory keeps a tenth of its rows for what is not held back. */
    static final double PATIENCE_MEMORY_MAX = 0.9;
    /** How far one held row resumed from, or one regret, moves that share. */
    static final double PATIENCE_STEP = 0.02;
    /** Patient rows are held back this many times the 90th percentile of the waits before a row's comeback. */
    static final double PATIENCE_MARGIN = 1.1;
    /** Waits remembered for the percentile. */
    static final int WAITS = 256;
    /**
     * Patience needs waits that cluster: the 90th percentile at most this many times the median (a memoryless wait's is
     * 3.3 times it, and a row held for such a wait is no likelier to be resumed than one ranked by worth).
     */
    static final double REGULAR = 2;
    /**
     * While the waits cluster and rows come back after they were dropped more often than while held (a loop larger
     * than memory), a row's class share counts raised to this power: the rows of classes that are resumed outlast the
     * others by more, as they must for a loop to be served at all.
     */
    static final double LOOP_SHARE_EXPONENT = 2;
    /** ... once this many waits were seen. */
    static final int LOOP_MIN_WAITS = 64;

    private final double depthExponent;
    private final boolean duel;
    /** The shadow LRU cache: key hash to what it holds of that record, least recently used first. */
    private final LinkedHashMap<Long, ShadowRecord> shadow = new LinkedHashMap<>(16, 0.75f, true);
    private long shadowSlots;
    private long residentSlots;
    /** The most slots ever resident: the shadow's size. */
    private long capacity;
    /**
     * Requests this policy served deeper than the shadow LRU would have, and those the shadow would have served deeper,
     * halved now and then.
     */
    private double worthOnly;
    private double lruOnly;
    /**
     * The requests being compared with the shadow, by their last record (the next record of a request hangs from it),
     * so that requests whose records arrive interleaved are told apart: at each record the requests that ended there
     * last, the latest first (several may resume from one shared row); the oldest records forgotten beyond
     * OPEN_REQUESTS, and a record's requests beyond REQUESTS_AT_ONE.
     */
    private final Map<Node, Request> openRequests = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Node, Request> eldest) {
            return size() > OPEN_REQUESTS;
        }
    };
    /** Resumes from set 0's rows minus those from set 1's, saturating at plus or minus DUEL_LIMIT. */
    private int samplesCounter;
    /**
     * The duel's verdict the rows are ranked under, for the rows outside set 0 (see {@link #verdict()}): taken again
     * when a request resumes from a row and when a row is published, not at each record published again.
     */
    private Verdict ranked = Verdict.UNDECIDED_RECENCY;
    private long allTrials;
    private long allResumed;
    private final Map<RecordKey, Node> nodes = new HashMap<>();
    private final Map<RecordKey, List<Node>> awaitingParent = new HashMap<>();
    private final TreeSet<Node> droppable = new TreeSet<>();
    private final FrequencySketch history = new FrequencySketch();
    private final long[] trials = new long[CLASSES];
    private final long[] resumed = new long[CLASSES];
    /** Trials and resumes of the classes without their span (see SHARE_PRIOR). */
    private final long[] spanlessTrials = new long[SPANLESS];
    private final long[] spanlessResumed = new long[SPANLESS];
    /** Each class's share when its rows were last ranked again (the prior's, 1/2, at first). */
    private final double[] rankedShare = new double[CLASSES];
    private int rowSlots;
    private double inflation;
    private long enlisted;
    private final boolean patience;
    /** Rows published so far: the clock of waits and patience. */
    private long clock;
    private long nodeIds;
    /** Rows dropped unused: key hash to the clock when their trial began, the oldest first. */
    private final LinkedHashMap<Long, Long> ghost = new LinkedHashMap<>();
    /** Rows that came back after they were dropped, and rows not patient that were resumed while held; halved. */
    private double late;
    private double resumedHeld;
    /** Whether the requests look like a loop larger than memory (see LOOP_SHARE_EXPONENT); decided with patience. */
    private boolean loop;
    /** Rows made patient so far (held back from dropping for their comeback), each once per publication of its row. */
    private long rowsHeldBack;
    private final long[] waits = new long[WAITS];
    private int waitCount;
    private int residentRows;
    private int maxResidentRows;
    /** How long patient rows are held back, in rows published (0: no row is made patient now). */
    private long patienceLimit;
    /** The share of the rows resident that held-back rows may take now. */
    private double patienceMemory = PATIENCE_MEMORY;
    /** Records dropped while rows were held back: key hash to the clock then, the oldest first. */
    private final LinkedHashMap<Long, Long> recentDrops = new LinkedHashMap<>();
    /** Patient rows held back from dropping, the soonest released first. */
    private final TreeSet<Node> waiting = new TreeSet<>((a, b) -> a.holdUntil != b.holdUntil
            ? Long.compare(a.holdUntil, b.holdUntil) : Long.compare(a.id, b.id));

    /** What the policy keeps of a resident record. */
    private static final class Node implements Comparable<Node> {
        final RecordIndex.Entry entry;
        Node parent;
        List<Node> children;
        int depth = 1;
        /** Depth of the deepest ancestor with a row, 0 when none has one. */
        int rowAbove;
        int turn;
        boolean novel = true;
        /**
         * Its span in blocks: this record and the run above it, each unused (and not read back from disk) when the
         * record below it arrived.
         */
        int fresh = 1;
        /** Whether it was known before it arrived here: a copy on disk (restored, or published again). */
        boolean known;
        int uses;
        int resumes;
        int recordClass = -1;
        /** Whether the row's trial in its class is still open: neither resumed from nor dropped since it entered. */
        boolean trial;
        int seen;
        boolean wasParent;
        double base;
        double priority;
        long seq;
        int slotCount;
        final long id;
        /** The clock when its row's trial last began. */
        long trialAt;
        /** Whether its row is held back until {@link #holdUntil} (a patient row), and whether it is now. */
        boolean patient;
        /** Whether its row's trial is the first since the row was published (not reopened by a resume). */
        boolean firstTrial;
        boolean heldBack;
        long holdUntil;
        /** Whether a request came back to it after its row was dropped unused. */
        boolean cameBack;
        /**
         * Whether its row arrived before the records above it up to the turn before: whether it is held back is decided
         * once they are there.
         */
        boolean patienceOnSettle;
        /** How many records have hung from it since it arrived, dropped ones too. */
        int fanOut;

        Node(RecordIndex.Entry entry, long id) {
            this.entry = entry;
            this.id = id;
        }

        @Override
        public int compareTo(Node o) {
            int c = Double.compare(priority, o.priority);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    /** The duel's verdict: the shadow's, or the samples' while the shadow has none. */
    enum Verdict {
        /** The shadow LRU cache served significantly more: every row outside set 0 is ranked by recency. */
        RECENCY,
        /** No clear verdict from the shadow, which does not lean to worth, nor has the worth sample led. */
        UNDECIDED_RECENCY,
        /** No clear verdict from the shadow, but it leans to worth, or the worth sample was resumed from more. */
        UNDECIDED_WORTH,
        /** This policy served significantly more than the shadow would have: every row is ranked by worth. */
        WORTH
    }

    /** A request compared with the shadow: the depth each side would serve, and the side its point went to. */
    private static final class Request {
        int served;
        int shadow;
        /** 1 worth, -1 recency, 0 neither (yet). */
        int point;
        /** The request that ended at the same record before this one, if any. */
        Request earlier;
    }

    /** What the shadow LRU cache holds of a record: its slots, and whether with a row. */
    private static final class ShadowRecord {
        int slots;
        boolean row;
    }

    /** A policy with the measured constants. */
    public WorthPolicy() {
        this(DEPTH_EXPONENT, true);
    }

    /** A policy with another depth exponent, with or without the duel (without: every row ranked by worth). */
    WorthPolicy(double depthExponent, boolean duel) {
        this(depthExponent, duel, true);
    }

    /** The same, with or without patience (see {@link #waited}). */
    WorthPolicy(double depthExponent, boolean duel, boolean patience) {
        this.depthExponent = depthExponent;
        this.duel = duel;
        this.patience = patience;
        Arrays.fill(rankedShare, 0.5);
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Rows are ranked by their own worth, so the row of a record others hang from may go before its pages. */
    @Override
    public boolean dropsRowsApart() {
        return true;
    }

    @Override
    public void onInsert(RecordIndex.Entry e) {
        regret(e);
        boolean back = comeback(e);
        Node n = new Node(e, ++nodeIds);
        n.cameBack = back;
        n.known = e.durable();
        holds(n, e.slots().count());
        // A record read back from disk reaches the shadow with the use that follows (the resume at it, or at a record
        // below it), which then finds whether the shadow had held it in memory.
        boolean shadowRow = !n.known && shadowTouch(e);
        if (e.spec().hasRow()) {
            rowSlots = Math.max(rowSlots, e.slots().count());
        }
        n.base = inflation;
        n.wasParent = e.residentChildren() > 0;
        nodes.put(e.key(), n);
        RecordKey parentKey = e.spec().parent();
        Node parent = parentKey == null ? null : nodes.get(parentKey);
        if (parent != null) {
            link(parent, n);
        } else if (parentKey != null) {
            awaitingParent.computeIfAbsent(parentKey, k -> new ArrayList<>()).add(n);
        }
        derive(n);
        if (!n.known) {
            requestPublished(n, shadowRow);
        }
        if (e.spec().hasRow()) {
            rowPublished(n);
            enterClass(n);
            history.increment(e.key().hash());
        }
        List<Node> waiting = awaitingParent.remove(e.key());
        if (waiting != null) {
            for (Node child : waiting) {
                link(n, child);
                settle(child);
            }
        }
    }

    @Override
    public void onUse(RecordIndex.Entry e, Use use) {
        Node n = nodes.get(e.key());
        n.uses++;
        n.base = inflation;
        if (n.seq != 0) {
            n.wasParent = false;
        }
        boolean resumed = use == Use.RESUMED && e.spec().hasRow();
        int shadowDepth = resumed && duel ? shadowRowDepth(n) : 0;
        boolean shadowHad = shadowTouch(e);
        n.cameBack |= comeback(e);
        if (resumed) {
            requestResumed(n, shadowDepth);
            if (n.trial && n.firstTrial) {
                if (!n.patient) {
                    resumedHeld++;
                    halveLate();
                }
                waited(clock - n.trialAt);
            }
            if (n.patient && patienceLimit > 0) {
                patienceMemory = Math.min(PATIENCE_MEMORY_MAX, patienceMemory + PATIENCE_STEP);
            }
            n.patient = false;
            n.resumes++;
            closeTrial(n, true);
            int set = duelSet(e.key());
            if (set == 0) {
                samplesCounter = Math.min(DUEL_LIMIT, samplesCounter + 1);
            } else if (set == 1) {
                samplesCounter = Math.max(-DUEL_LIMIT, samplesCounter - 1);
            }
            verdictMayHaveMoved();
            history.increment(e.key().hash());
            enterClass(n);
        } else {
            requestPublished(n, shadowHad);
        }
        rerank(n);
    }

    @Override
    public void onRowChanged(RecordIndex.Entry e) {
        Node n = nodes.get(e.key());
        holds(n, e.slots().count());
        if (e.spec().hasRow()) {
            requestPublished(n, shadowTouch(e));
            regret(e);
            n.cameBack |= comeback(e);
            rowSlots = Math.max(rowSlots, e.slots().count());
            n.base = inflation;
            rowPublished(n);
            enterClass(n);
            history.increment(e.key().hash());
        } else {
            residentRows--;
            dropped(e);
            closeTrial(n, false);
        }
        if (n.children != null) {
            for (Node child : n.children) {
                rowAboveChanged(child);
            }
        }
    }

    /** {@code n}'s parent gained or lost its row: the row above {@code n} and its subtree moves. */
    private void rowAboveChanged(Node n) {
        Node p = n.parent;
        n.rowAbove = p.entry.spec().hasRow() ? p.depth : p.rowAbove;
        rerank(n);
        if (n.children != null && !n.entry.spec().hasRow()) {
            for (Node child : n.children) {
                rowAboveChanged(child);
            }
        }
    }

    @Override
    public void onAncestorUse(RecordIndex.Entry e) {
        Node n = nodes.get(e.key());
        n.cameBack |= comeback(e);
        n.uses++;
        shadowTouch(e);
        if (e.dropsRowOnly()) { // a row others hang from ages with its chain's use, not only its own resumes
            n.base = inflation;
            rerank(n);
        }
    }

    @Override
    public void onRemove(RecordIndex.Entry e) {
        Node n = nodes.remove(e.key());
        openRequests.remove(n);
        residentSlots -= n.slotCount;
        dropped(e);
        if (e.spec().hasRow()) {
            residentRows--;
        }
        closeTrial(n, false);
        if (n.parent != null && n.parent.children != null) {
            n.parent.children.remove(n);
        } else if (e.spec().parent() != null) {
            List<Node> waiting = awaitingParent.get(e.spec().parent());
            if (waiting != null && waiting.remove(n) && waiting.isEmpty()) {
                awaitingParent.remove(e.spec().parent());
            }
        }
        if (n.children != null && !n.children.isEmpty()) {
            for (Node child : n.children) {
                child.parent = null;
            }
            awaitingParent.computeIfAbsent(e.key(), k -> new ArrayList<>()).addAll(n.children);
        }
    }

    @Override
    public void enlist(RecordIndex.Entry e) {
        Node n = nodes.get(e.key());
        rank(n);
        if (holdsBack(n)) {
            holdBack(n);
        } else {
            droppable.add(n);
        }
    }

    @Override
    public void delist(RecordIndex.Entry e) {
        Node n = nodes.get(e.key());
        if (n.heldBack) {
            waiting.remove(n);
            n.heldBack = false;
        } else {
            droppable.remove(n);
        }
        n.seq = 0;
        if (e.residentChildren() > 0) {
            n.wasParent = true;
        }
    }

    @Override
    public RecordIndex.Entry victim() {
        if (droppable.isEmpty()) {
            return waiting.isEmpty() ? null : waiting.first().entry;
        }
        Node v = droppable.first();
        inflation = Math.max(inflation, v.priority);
        return v.entry;
    }

    @Override
    public int size() {
        return droppable.size() + waiting.size();
    }

    /**
     * The share of rows of {@code recordClass} that were resumed from, starting from the share of its rows' novelty,
     * turn and history over every span (which starts at 1/2: one success and one failure assumed).
     */
    double share(int recordClass) {
        int spanless = recordClass % SPANLESS;
        double prior = (spanlessResumed[spanless] + 1.0) / (spanlessTrials[spanless] + 2.0);
        return (resumed[recordClass] + SHARE_PRIOR * prior) / (trials[recordClass] + SHARE_PRIOR);
    }

    /**
     * What a row of {@code recordClass} is worth per unit of saving: its class's share, squared while the requests look
     * like a loop larger than memory.
     */
    double classWeight(int recordClass) {
        double share = share(recordClass);
        return loop ? Math.pow(share, LOOP_SHARE_EXPONENT) : share;
    }

    /** Whether the requests look like a loop larger than memory now (see LOOP_SHARE_EXPONENT). */
    boolean loop() {
        return loop;
    }

    /** The class {@code e}'s row was last counted in (-1: it never had a row here). */
    int classOf(RecordIndex.Entry e) {
        return nodes.get(e.key()).recordClass;
    }

    /** The share of the rows resident that rows held back for their comeback may take now. */
    double patienceMemory() {
        return patienceMemory;
    }

    /**
     * How many rows are held back for their comeback now: droppable patient rows whose hold has not ended, droppable
     * whole (a row others hang from is ranked by worth instead).
     */
    int heldBack() {
        return waiting.size();
    }

    @Override
    public long rowsHeldBack() {
        return rowsHeldBack;
    }

    /** Whether {@code e}'s row is held back for its comeback (a patient row whose hold has not ended). */
    boolean patient(RecordIndex.Entry e) {
        Node n = nodes.get(e.key());
        return n.patient && e.spec().hasRow() && n.holdUntil > clock;
    }

    /** What keeping {@code e} is worth now: the value its priority adds to its base. */
    double value(RecordIndex.Entry e) {
        Node n = nodes.get(e.key());
        if (e.spec().hasRow() && !byWorth(e.key()) && !e.dropsRowOnly()) {
            return (allResumed + 1.0) / (allTrials + 2.0);
        }
        double perSlot = saved(n.depth - n.rowAbove) * Math.max(rowSlots, e.slots().count()) / e.slots().count();
        if (e.spec().hasRow()) {
            return classWeight(n.recordClass) * perSlot;
        }
        return n.wasParent && e.residentChildren() == 0 ? 0 : perSlot;
    }

    /** The duel's points so far, for this policy and for the shadow LRU cache (for tests). */
    double[] duelPoints() {
        return new double[] {worthOnly, lruOnly};
    }

    /**
     * The duel's verdict now: the shadow LRU cache's when one side leads it by more than DUEL_Z standard deviations of
     * the difference; otherwise worth when the shadow leans to it or the worth sample leads the samples' counter.
     */
    Verdict verdict() {
        double lead = worthOnly - lruOnly;
        double spread = DUEL_Z * Math.sqrt(worthOnly + lruOnly);
        if (lead > spread) {
            return Verdict.WORTH;
        }
        if (-lead > spread) {
            return Verdict.RECENCY;
        }
        return samplesCounter > 0 || worthOnly > lruOnly ? Verdict.UNDECIDED_WORTH : Verdict.UNDECIDED_RECENCY;
    }

    /**
     * Whether a row at {@code key} is ranked by its worth now, or by recency alone (a row others hang from is always
     * ranked by worth; {@link #value} sees to that): set 0 always by worth; the others as the verdict last taken
     * says, set 1 by recency until the shadow has spoken.
     */
    boolean byWorth(RecordKey key) {
        if (!duel) {
            return true;
        }
        int set = duelSet(key);
        if (set == 0) {
            return true;
        }
        return switch (ranked) {
            case WORTH -> true;
            case RECENCY, UNDECIDED_RECENCY -> false;
            case UNDECIDED_WORTH -> set != 1;
        };
    }

    /** The duel's sample set of {@code key}: 0 (always worth), 1 (recency until the shadow speaks) or another. */
    static int duelSet(RecordKey key) {
        return (int) Long.remainderUnsigned(ChainHash.mix(key.hash() ^ DUEL_SALT), DUEL_SETS);
    }

    /**
     * Takes the duel's verdict again (as a row is published and as a request resumes, not at each record published
     * again, so that a publication's records rank alike whatever arrives first): when it changed, the droppable rows
     * ranked under the old one (all but set 0's and the rows others hang from) are ranked again, so none keeps a
     * ranking the workload has disproved.
     */
    private void verdictMayHaveMoved() {
        if (!duel) {
            return;
        }
        Verdict now = verdict();
        if (now != ranked) {
            ranked = now;
            rankAgain(n -> n.entry.spec().hasRow() && !n.entry.dropsRowOnly() && duelSet(n.entry.key()) != 0);
        }
    }

    /**
     * Ranks the droppable records that {@code which} picks again with their value now; each keeps its base and its
     * place among equals (the least recently used first).
     */
    private void rankAgain(Predicate<Node> which) {
        List<Node> picked = new ArrayList<>();
        for (Node n : droppable) {
            if (which.test(n)) {
                picked.add(n);
            }
        }
        for (Node n : picked) {
            droppable.remove(n);
            n.priority = n.base + value(n.entry);
            droppable.add(n);
        }
    }

    /**
     * Uses {@code e}'s key in the shadow LRU cache (adding it, with its row if it has one, and dropping the least
     * recently used keys past the capacity), and says whether the shadow held the key with a row before.
     */
    private boolean shadowTouch(RecordIndex.Entry e) {
        if (!duel) {
            return false;
        }
        ShadowRecord r = shadow.get(e.key().hash());
        boolean heldRow = r != null && r.row;
        if (r == null) {
            r = new ShadowRecord();
            shadow.put(e.key().hash(), r);
        }
        int slots = e.slots().count();
        if (slots > r.slots) {
            shadowSlots += slots - r.slots;
            r.slots = slots;
        }
        r.row |= e.spec().hasRow();
        for (var it = shadow.values().iterator(); shadowSlots > capacity && it.hasNext(); ) {
            shadowSlots -= it.next().slots;
            it.remove();
        }
        return heldRow;
    }

    /** {@code n} now holds {@code slots} slots: the resident total, and the most ever (the shadow's size), follow. */
    private void holds(Node n, int slots) {
        residentSlots += slots - n.slotCount;
        n.slotCount = slots;
        capacity = Math.max(capacity, residentSlots);
    }

    /**
     * A request resumed from {@code n}'s row: the next request to compare. The cache served {@code n}'s depth; the
     * shadow LRU would have served {@code shadowDepth}, the deepest of {@code n} and its ancestors it held with a row
     * before this use.
     */
    private void requestResumed(Node n, int shadowDepth) {
        if (!duel) {
            return;
        }
        Request r = new Request();
        r.served = n.depth;
        r.shadow = shadowDepth;
        endsAt(n, r);
        scoreRequest(r);
    }

    /** {@code r}'s last record is {@code n} now: its next record, if any, will hang from {@code n}. */
    private void endsAt(Node n, Request r) {
        r.earlier = openRequests.remove(n);
        Request last = r;
        for (int i = 1; i < REQUESTS_AT_ONE && last.earlier != null; i++) {
            last = last.earlier;
        }
        last.earlier = null;
        openRequests.put(n, r);
    }

    /** The latest request that ended at {@code n}, taken off it (its next record has arrived); null for none. */
    private Request continuedFrom(Node n) {
        Request r = n == null ? null : openRequests.remove(n);
        if (r != null && r.earlier != null) {
            openRequests.put(n, r.earlier);
            r.earlier = null;
        }
        return r;
    }

    /**
     * The deepest of {@code n} and its ancestors the shadow holds with a row, 0 for none; looked up before the shadow
     * is touched for {@code n}'s use, which may push an ancestor out.
     */
    private int shadowRowDepth(Node n) {
        for (Node a = n; a != null; a = a.parent) {
            ShadowRecord r = shadow.get(a.entry.key().hash());
            if (r != null && r.row) {
                return a.depth;
            }
        }
        return 0;
    }

    /**
     * {@code n} was published (stored, found present, or its row joined its pages; {@code shadowRow}: the shadow held
     * it with a row before): a record of the request being compared when it hangs from that request's last record,
     * else the first record of a request that resumed from nothing. Where the shadow held it with a row, the shadow
     * would have served that deep.
     */
    private void requestPublished(Node n, boolean shadowRow) {
        if (!duel) {
            return;
        }
        Request r = continuedFrom(n.parent);
        if (r == null) {
            r = new Request();
        }
        if (shadowRow) {
            r.shadow = Math.max(r.shadow, n.depth);
        }
        endsAt(n, r);
        scoreRequest(r);
    }

    /**
     * Gives the request being compared its point, to the side that served it deeper, or moves the point it has when
     * its records published since show the shadow would have served deeper after all: one point per request.
     */
    private void scoreRequest(Request r) {
        int side = Integer.signum(r.served - r.shadow);
        if (side == r.point) {
            return;
        }
        if (r.point > 0) {
            worthOnly = Math.max(0, worthOnly - 1);
        } else if (r.point < 0) {
            lruOnly = Math.max(0, lruOnly - 1);
        }
        if (side != 0) {
            duelCount(side > 0);
        }
        r.point = side;
    }

    private void duelCount(boolean worth) {
        if (worth) {
            worthOnly++;
        } else {
            lruOnly++;
        }
        if (worthOnly + lruOnly > DUEL_WINDOW) {
            worthOnly /= 2;
            lruOnly /= 2;
        }
    }

    private double saved(int depth) {
        return Math.pow(depth, depthExponent);
    }

    private void rank(Node n) {
        n.priority = n.base + value(n.entry);
        n.seq = ++enlisted;
    }

    private void rerank(Node n) {
        if (n.seq == 0) {
            return;
        }
        if (!n.heldBack) {
            droppable.remove(n);
        } else if (holdsBack(n)) {
            rank(n);
            return;
        } else { // resumed from, or its row gone: no longer held back
            waiting.remove(n);
        }
        release(n);
    }

    /** Ranks {@code n}, out of both sets, and makes it droppable. */
    private void release(Node n) {
        n.heldBack = false;
        rank(n);
        droppable.add(n);
    }

    /**
     * A row was published at {@code n} (new, or joining its pages): the clock moves, and the row may be made
     * patient: held back from dropping for the wait that rows here come back after, if its conversation went on
     * and the rows held back leave room.
     */
    private void rowPublished(Node n) {
        clock++;
        releaseHeld();
        verdictMayHaveMoved();
        residentRows++;
        maxResidentRows = Math.max(maxResidentRows, residentRows);
        n.firstTrial = true;
        n.holdUntil = clock + patienceLimit;
        n.patient = mayHoldBack(n);
        rowsHeldBack += n.patient ? 1 : 0;
        // A row whose turn above has not arrived yet is decided again once it has (see settle): the comeback that
        // brings it may start patience or move its length.
        n.patienceOnSettle = turnAboveToCome(n);
    }

    /** Listed {@code n} waits among the rows held back (it is not among the droppable ones). */
    private void holdBack(Node n) {
        n.heldBack = true;
        waiting.add(n);
    }

    /** Whether listed {@code n} waits among the rows held back: a patient row, droppable whole, its hold not over. */
    private boolean holdsBack(Node n) {
        return n.patient && n.entry.spec().hasRow() && !n.entry.dropsRowOnly() && n.holdUntil > clock;
    }

    /**
     * The clock moved: rows whose hold is over become droppable, ranked now. Done as the clock moves rather than when
     * memory next needs room, so that how many rows are held back, which decides whether the next one may be, does
     * not follow when memory happened to make room (a node makes room for a whole publication before its records
     * arrive, the simulator record by record).
     */
    private void releaseHeld() {
        while (!waiting.isEmpty() && waiting.first().holdUntil <= clock) {
            release(waiting.pollFirst());
        }
    }

    /** Whether patience is on, {@code n}'s conversation went on, and the rows held back leave room for one more. */
    private boolean mayHoldBack(Node n) {
        return patienceLimit > 0 && wentOn(n) && waiting.size() < patienceMemory * residentRows;
    }

    /**
     * The records above {@code n} up to the turn before arrived after its row did: whether the row is held back, and
     * for how long, is decided now, as it would have been had they come first, so the order of arrival does not change
     * it. A row whose hold would already be over is not held.
     */
    private void decideOnSettle(Node n) {
        if (!n.patienceOnSettle || turnAboveToCome(n)) {
            return;
        }
        n.patienceOnSettle = false;
        if (n.patient || !n.trial || !n.firstTrial || !mayHoldBack(n) || n.trialAt + patienceLimit <= clock) {
            return;
        }
        n.holdUntil = n.trialAt + patienceLimit;
        n.patient = true;
        rowsHeldBack++;
        if (n.seq != 0 && !n.heldBack && holdsBack(n)) {
            droppable.remove(n);
            holdBack(n);
        }
    }

    /**
     * Whether {@code n}'s conversation went on: the nearest record above it that had a row or was come back to (the
     * end of the turn before) was resumed from or came back to, and nothing else has hung from it since it arrived (a
     * shared prefix does not make every turn under it look like a second one).
     */
    private static boolean wentOn(Node n) {
        Node p = turnAbove(n);
        return p != null && (p.resumes > 0 || p.cameBack) && p.fanOut <= 1;
    }

    /** The nearest record above {@code n} that had a row or was come back to, or null when none is resident. */
    private static Node turnAbove(Node n) {
        Node p = n.parent;
        while (p != null && !endsTurn(p)) {
            p = p.parent;
        }
        return p;
    }

    /** Whether {@code p} ends a turn: it had a row (it has a class), or a request came back to it. */
    private static boolean endsTurn(Node p) {
        return p.recordClass >= 0 || p.cameBack;
    }

    /**
     * Whether the record above {@code n} that ends the turn before may still arrive: the records above it that have
     * arrived, up to the first with a row, end at one whose parent has not (a publication's records may arrive in
     * any order).
     */
    private static boolean turnAboveToCome(Node n) {
        Node last = n;
        for (Node p = n.parent; p != null; p = p.parent) {
            if (endsTurn(p)) {
                return false;
            }
            last = p;
        }
        return last.entry.spec().parent() != null;
    }

    /**
     * A request reached {@code e}'s key after its row was dropped unused: a comeback memory did not hold. Says
     * whether it was one.
     */
    private boolean comeback(RecordIndex.Entry e) {
        if (!patience || ghost.isEmpty()) {
            return false;
        }
        Long at = ghost.remove(e.key().hash());
        if (at == null) {
            return false;
        }
        late++;
        halveLate();
        waited(clock - at);
        return true;
    }

    private void halveLate() {
        if (late + resumedHeld > DUEL_WINDOW) {
            late /= 2;
            resumedHeld /= 2;
        }
    }

    /**
     * A row's wait from its trial's start to a request at it; every sixteenth wait the patience is decided again:
     * on once rows come back mostly after they were dropped and the waits cluster, for the 90th percentile of the
     * waits; and whether the requests look like a loop larger than memory (the waits cluster, and rows come back after
     * they were dropped more often than while held).
     */
    private void waited(long wait) {
        if (!patience) {
            return;
        }
        waits[waitCount++ % WAITS] = wait;
        if (waitCount % 16 != 0) {
            return;
        }
        long[] sorted = Arrays.copyOf(waits, Math.min(waitCount, WAITS));
        Arrays.sort(sorted);
        long w90 = Math.max(1, sorted[(int) (sorted.length * 0.9)]);
        long w50 = Math.max(1, sorted[sorted.length / 2]);
        boolean clustered = w90 <= REGULAR * w50;
        loop = clustered && waitCount >= LOOP_MIN_WAITS && late > resumedHeld;
        patienceLimit = clustered && late >= LATE_MIN && late > LATE_RATIO * resumedHeld
                ? (long) Math.ceil(PATIENCE_MARGIN * w90) : 0;
    }

    /** While patience is on, remembers when {@code e} (a record, or a row apart from its pages) was dropped. */
    private void dropped(RecordIndex.Entry e) {
        if (patienceLimit == 0) {
            return;
        }
        remember(recentDrops, e.key().hash(), clock);
    }

    /**
     * Puts {@code hash} in {@code dropped} (a map of dropped records, the oldest first), forgetting the oldest past
     * GHOST_FACTOR times the most rows ever resident.
     */
    private void remember(LinkedHashMap<Long, Long> dropped, long hash, long at) {
        dropped.put(hash, at);
        for (var it = dropped.values().iterator();
             dropped.size() > GHOST_FACTOR * Math.max(64, maxResidentRows) && it.hasNext(); ) {
            it.next();
            it.remove();
        }
    }

    /**
     * {@code e} is published again: if it was dropped while rows were held back, within as many rows as are held back
     * now (the room they take, in rows: without them it would have stayed about that much longer), that is what the
     * patience cost, and the share held rows may take shrinks a step.
     */
    private void regret(RecordIndex.Entry e) {
        if (recentDrops.isEmpty()) {
            return;
        }
        Long at = recentDrops.remove(e.key().hash());
        if (at != null && clock - at < Math.max(1, waiting.size()) && patienceLimit > 0) {
            patienceMemory = Math.max(PATIENCE_MEMORY_MIN, patienceMemory - PATIENCE_STEP);
        }
    }

    private static void link(Node parent, Node child) {
        child.parent = parent;
        if (parent.children == null) {
            parent.children = new ArrayList<>(1);
        }
        parent.children.add(child);
        parent.fanOut++;
    }

    /** Sets {@code n}'s depth, turn and novelty from its resident parent (a root's when there is none). */
    private void derive(Node n) {
        Node p = n.parent;
        if (p == null) {
            n.depth = 1;
            n.rowAbove = 0;
            n.turn = 0;
            n.novel = true;
            n.fresh = 1;
        } else {
            n.depth = p.depth + 1;
            n.rowAbove = p.entry.spec().hasRow() ? p.depth : p.rowAbove;
            n.turn = p.turn + (p.resumes > 0 ? 1 : 0);
            n.novel = p.novel && p.uses == 0;
            // A parent read back from disk is a new node here, unused, but no part of what this request added.
            n.fresh = p.uses == 0 && !p.known ? p.fresh + 1 : 1;
        }
    }

    /** Derives {@code n} again now that its parent arrived, moves its trial to its new class, and its subtree's. */
    private void settle(Node n) {
        derive(n);
        if (n.trial) {
            n.recordClass = classOf(n);
        }
        decideOnSettle(n);
        rerank(n);
        if (n.children != null) {
            for (Node child : n.children) {
                settle(child);
            }
        }
    }

    private int classOf(Node n) {
        int turn = Math.min(n.turn, MAX_TURN);
        int span = 0;
        for (int f = n.fresh; f >= SPAN_BASE && span < SPANS - 1; f /= SPAN_BASE) {
            span++;
        }
        return (n.novel ? 1 : 0) + 2 * (turn + (MAX_TURN + 1) * (n.seen + (MAX_HISTORY + 1) * span));
    }

    private void enterClass(Node n) {
        n.trialAt = clock;
        n.seen = Math.min(history.frequency(n.entry.key().hash()), MAX_HISTORY);
        n.recordClass = classOf(n);
        n.trial = true;
    }

    /**
     * Counts {@code n}'s open trial, if any, in its class: a success when a request resumed from its row, a failure
     * when the row left unused. A trial is counted only once it has ended, so rows still waiting for their next turn
     * do not count as failures and a class's share does not sink while many of its rows are young.
     */
    private void closeTrial(Node n, boolean resumedFrom) {
        if (!n.trial) {
            return;
        }
        n.trial = false;
        boolean first = n.firstTrial;
        n.firstTrial = false;
        if (!resumedFrom && patience && first) {
            remember(ghost, n.entry.key().hash(), n.trialAt);
        }
        int c = n.recordClass;
        allTrials++;
        if (resumedFrom) {
            resumed[c]++;
            allResumed++;
        }
        int spanless = c % SPANLESS;
        if (resumedFrom) {
            spanlessResumed[spanless]++;
        }
        if (++spanlessTrials[spanless] >= COUNT_HALF_LIFE) {
            spanlessTrials[spanless] /= 2;
            spanlessResumed[spanless] /= 2;
        }
        if (++trials[c] >= COUNT_HALF_LIFE) {
            trials[c] /= 2;
            resumed[c] /= 2;
        }
        // A class's share starts from its spanless group's, so every class of the group may have moved: the spans
        // whose share did are ranked again in one pass over the droppable records.
        int movedSpans = 0;
        for (int span = 0; span < SPANS; span++) {
            int k = spanless + span * SPANLESS;
            double now = share(k);
            if (now > rankedShare[k] * SHARE_DRIFT || now < rankedShare[k] / SHARE_DRIFT) {
                rankedShare[k] = now;
                movedSpans |= 1 << span;
            }
        }
        if (movedSpans != 0) {
            int moved = movedSpans;
            rankAgain(r -> r.entry.spec().hasRow() && r.recordClass % SPANLESS == spanless
                    && (moved & 1 << r.recordClass / SPANLESS) != 0);
        }
    }
}
