package dev.selene.engine.policy;

import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Ranks droppable records by what keeping them is worth: the prefill a hit on them saves, per slot they hold, times
 * how likely a request is to resume there, with recency breaking ties; the least worth goes first.
 *
 * <pre>
 * priority(r) = base(r) + value(r)          drop the lowest; base(r) = L at r's last use; L = last dropped priority
 * value(r)    = a row record:  p(class(r)) × saved(depth(r)) × slotsOfARow / slots(r)
 *               a page-only leaf that was a parent, unused since: 0 (nothing can end a match there)
 *               any other page-only record: saved(depth(r)) × slotsOfARow / slots(r)
 * saved(d)    = d ^ DEPTH_EXPONENT          prefill a hit at depth d saves, in blocks (1 at the root)
 * class(r)    = (novel, turn, history)      novel: r starts a chain or extends one nobody used since it was
 *               published; turn: rows on r's chain that were resumed from before r arrived (0, 1, 2+: how far a
 *               conversation has gone); history: how often r's key was published or resumed from before (0, 1, 2+,
 *               a frequency sketch that outlives the record)
 * p(c)        = (resumed + 1) / (trials + 2), each row counting one trial per class it enters
 * </pre>
 */
public final class WorthPolicy implements EvictionPolicy {

    /*
     * Design
     *
     * What a kept row is worth. A row is large and fixed in size (a qwen-tp1 row is four times its record's
     * pages), useful only at its exact position, and most rows of a chat workload are never resumed from: one-off
     * questions, or the last turn of a conversation. Marconi [1] keeps the recurrent states of hybrid models,
     * which are exactly such rows, by the compute a hit saves per byte held, combined with recency; we do the same
     * with GreedyDual [2] as the combination: a record's priority is the inflation L at its last use plus its
     * value, L rises to each dropped record's priority, so a record outlives cheaper ones by its value but not for
     * ever, and among equals the least recently used goes first.
     *
     * The value is (probability of a resume) × (prefill a resume saves) / (slots held). The saving grows with the
     * depth of the match it ends: a resume at depth d serves d blocks. DEPTH_EXPONENT sets how much deeper rows are
     * favoured; it was chosen by measurement on the traces the comparison marks as tuned on (see docs/replay.md):
     * a larger exponent keeps long conversations and drops short one-offs, which serves more tokens until deep
     * rows that will never be resumed outstay their use.
     *
     * The probability is learnt per class, as the reuse policy does [3]: the share of rows of a class that were
     * resumed from. The classes are Marconi's taxonomy of where states are reused, in the terms a host tier can
     * observe: a conversation's end (a row on a chain whose earlier rows were resumed: the conversation has gone
     * on before and likely goes on again), the start of new chains (novel rows), and keys seen again (a shared
     * prefix asked about again). On a workload where the classes do not differ, the value is the saving alone.
     *
     * Order of arrival. A publication's records may become resident in any order; a record whose parent is not
     * resident yet takes depth 1 and turn 0 until the parent arrives, and is then settled with what hangs from it,
     * so the order does not change the ranking.
     *
     * Limits. Only droppable records are ranked (memory only: leaves, so a chain is eaten from its tail). A row
     * cannot be dropped apart from its pages, so a row nobody resumes costs its pages too.
     *
     * [1] Pan et al., Marconi: Prefix Caching for the Era of Hybrid LLMs, MLSys 2025.
     * [2] Cao and Irani, Cost-aware WWW proxy caching algorithms (GreedyDual-Size), USENIX 1997.
     * [3] Beckmann et al., LHD: Improving Cache Hit Rate by Maximizing Hit Density, NSDI 2018.
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

    private static final int CLASSES = 2 * (MAX_TURN + 1) * (MAX_HISTORY + 1);

    private final double depthExponent;
    private final Map<RecordKey, Node> nodes = new HashMap<>();
    private final Map<RecordKey, List<Node>> awaitingParent = new HashMap<>();
    private final TreeSet<Node> droppable = new TreeSet<>();
    private final FrequencySketch history = new FrequencySketch();
    private final long[] trials = new long[CLASSES];
    private final long[] resumed = new long[CLASSES];
    private int rowSlots;
    private double inflation;
    private long enlisted;

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
        int uses;
        int resumes;
        int recordClass = -1;
        int seen;
        boolean wasParent;
        double base;
        double priority;
        long seq;

        Node(RecordIndex.Entry entry) {
            this.entry = entry;
        }

        @Override
        public int compareTo(Node o) {
            int c = Double.compare(priority, o.priority);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    /** A policy with the measured constants. */
    public WorthPolicy() {
        this(DEPTH_EXPONENT);
    }

    /** A policy whose saving grows with depth as {@code depthExponent} says (for measurements). */
    WorthPolicy(double depthExponent) {
        this.depthExponent = depthExponent;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void onInsert(RecordIndex.Entry e) {
        Node n = new Node(e);
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
        if (e.spec().hasRow()) {
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
        if (use == Use.RESUMED && e.spec().hasRow()) {
            n.resumes++;
            resumed[n.recordClass]++;
            history.increment(e.key().hash());
            enterClass(n);
        }
        rerank(n);
    }

    @Override
    public void onAncestorUse(RecordIndex.Entry e) {
        nodes.get(e.key()).uses++;
    }

    @Override
    public void onRemove(RecordIndex.Entry e) {
        Node n = nodes.remove(e.key());
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
        droppable.add(n);
    }

    @Override
    public void delist(RecordIndex.Entry e) {
        Node n = nodes.get(e.key());
        droppable.remove(n);
        n.seq = 0;
        if (e.residentChildren() > 0) {
            n.wasParent = true;
        }
    }

    @Override
    public RecordIndex.Entry victim() {
        if (droppable.isEmpty()) {
            return null;
        }
        Node v = droppable.first();
        inflation = Math.max(inflation, v.priority);
        return v.entry;
    }

    @Override
    public int size() {
        return droppable.size();
    }

    /** The share of rows of {@code recordClass} that were resumed from, with one success and failure assumed. */
    double share(int recordClass) {
        return (resumed[recordClass] + 1.0) / (trials[recordClass] + 2.0);
    }

    /** What keeping {@code e} is worth now: the value its priority adds to its base. */
    double value(RecordIndex.Entry e) {
        Node n = nodes.get(e.key());
        double perSlot = saved(n.depth - n.rowAbove) * Math.max(rowSlots, e.slots().count()) / e.slots().count();
        if (e.spec().hasRow()) {
            return share(n.recordClass) * perSlot;
        }
        return n.wasParent && e.residentChildren() == 0 ? 0 : perSlot;
    }

    private double saved(int depth) {
        return Math.pow(depth, depthExponent);
    }

    private void rank(Node n) {
        n.priority = n.base + value(n.entry);
        n.seq = ++enlisted;
    }

    private void rerank(Node n) {
        if (n.seq != 0) {
            droppable.remove(n);
            rank(n);
            droppable.add(n);
        }
    }

    private static void link(Node parent, Node child) {
        child.parent = parent;
        if (parent.children == null) {
            parent.children = new ArrayList<>(1);
        }
        parent.children.add(child);
    }

    /** Sets {@code n}'s depth, turn and novelty from its resident parent (a root's when there is none). */
    private void derive(Node n) {
        Node p = n.parent;
        if (p == null) {
            n.depth = 1;
            n.rowAbove = 0;
            n.turn = 0;
            n.novel = true;
        } else {
            n.depth = p.depth + 1;
            n.rowAbove = p.entry.spec().hasRow() ? p.depth : p.rowAbove;
            n.turn = p.turn + (p.resumes > 0 ? 1 : 0);
            n.novel = p.novel && p.uses == 0;
        }
    }

    /** Derives {@code n} again now that its parent arrived, moves its trial to its new class, and its subtree's. */
    private void settle(Node n) {
        derive(n);
        if (n.recordClass >= 0) {
            trials[n.recordClass] = Math.max(0, trials[n.recordClass] - 1);
            n.recordClass = classOf(n);
            trials[n.recordClass]++;
        }
        rerank(n);
        if (n.children != null) {
            for (Node child : n.children) {
                settle(child);
            }
        }
    }

    private int classOf(Node n) {
        int turn = Math.min(n.turn, MAX_TURN);
        return (n.novel ? 1 : 0) + 2 * (turn + (MAX_TURN + 1) * n.seen);
    }

    private void enterClass(Node n) {
        n.seen = Math.min(history.frequency(n.entry.key().hash()), MAX_HISTORY);
        n.recordClass = classOf(n);
        if (++trials[n.recordClass] >= COUNT_HALF_LIFE) {
            trials[n.recordClass] /= 2;
            resumed[n.recordClass] /= 2;
        }
    }
}
