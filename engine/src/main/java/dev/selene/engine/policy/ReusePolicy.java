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
 * Ranks droppable records by how likely a request is to resume from them, learnt from the workload, and drops the
 * least likely first, recency breaking ties: a prefix cache's answer to what plain LRU ignores.
 *
 * <pre>
 * priority(r) = base(r) + value(r)           drop the lowest; base(r) = L at r's last use (insert or use)
 * L           = priority of the last record dropped (never decreases)
 * value(r)    = a row record:               p(class(r)), the share of records of its class that were resumed from
 *               a page-only leaf that was a parent, unused since: 0 (its chain's tail is gone; nothing can end a
 *               match there)
 *               any other page-only record: 1 (a chain being published, or a parent in a node with a disk tier)
 * class(r)    = (novel?, history) - novel: r starts a chain or extends one nobody has used since it was
 *               published; history: how often its key was published or resumed from before, 0..3, from a
 *               frequency sketch that outlives the record
 * p(c)        = (resumed + 1) / (trials + 2), each row record counting one trial per class it enters
 * </pre>
 */
public final class ReusePolicy implements EvictionPolicy {

    /*
     * Design
     *
     * Order. GreedyDual [1]: a record's priority is the inflation value L at its last use plus its value, and L
     * rises to each dropped record's priority, so a valuable record outlives cheaper ones by its value but not for
     * ever, and recency decides among equals. The base is taken at the last use, not when a record becomes
     * droppable again: a parent that becomes a leaf when its children go lands where its last use puts it, as
     * under LRU, so a cold chain is dropped from its tail up, whole, instead of one step at a time across all
     * chains.
     *
     * Value. What a prefix cache knows that LRU does not: a row ends matches, pages only pass them on; a row
     * that was resumed from, or whose key comes back after its eviction, is worth more on some workloads (shared
     * documents, asked about again and again) and nothing on others (a conversation's turn, resumed once by the
     * next turn and then superseded). Rather than fix which, the policy counts, per class, how many records were
     * resumed from, and values a record by its class's share [2]; on a workload where classes do not differ it
     * orders by recency, as LRU does. The history survives eviction in a count-min sketch, as TinyLFU's does [3].
     *
     * Novelty. A record is novel when it starts a chain or continues one no request has used since it was
     * published: the rows of new documents and new conversations. Rows that extend a chain others use are the
     * other class; on the Mooncake synthetic trace they are resumed from a tenth as often. A publication's records
     * may become resident in any order: a record whose parent is not resident yet counts as novel until the parent
     * arrives, and is then settled (with what hangs from it), so the order does not change the ranking.
     *
     * Limits. Only droppable records are ranked (memory-only: leaves). A record's row cannot be dropped apart from
     * its pages. Class counts are halved every COUNT_HALF_LIFE trials so that the shares follow a workload that
     * changes.
     *
     * [1] Cao and Irani, Cost-aware WWW proxy caching algorithms (GreedyDual-Size), USENIX 1997.
     * [2] As a hit-rate estimate per class, the idea behind LHD (Beckmann et al., NSDI 2018), with classes
     *     instead of ages.
     * [3] Einziger, Friedman and Manes, TinyLFU: a highly efficient cache admission policy, ACM ToS 2017.
     */

    /** The name settings use. */
    public static final String NAME = "reuse";

    /** Highest history a class tells apart. */
    static final int MAX_HISTORY = 3;
    /** Trials of a class after which its counts are halved. */
    static final int COUNT_HALF_LIFE = 4096;

    private static final int CLASSES = 2 * (MAX_HISTORY + 1);
    private static final double CHAIN_VALUE = 1;
    private static final double TAIL_VALUE = 0;

    private final Map<RecordKey, Node> nodes = new HashMap<>();
    private final Map<RecordKey, List<Node>> awaitingParent = new HashMap<>();
    private final TreeSet<Node> droppable = new TreeSet<>();
    private final FrequencySketch history = new FrequencySketch();
    private final long[] trials = new long[CLASSES];
    private final long[] resumed = new long[CLASSES];
    private double inflation;
    private long enlisted;

    /** What the policy keeps of a resident record. */
    private static final class Node implements Comparable<Node> {
        final RecordIndex.Entry entry;
        boolean novel;
        /** Novelty assumed because the parent is not resident yet (a publication's records arrive in any order). */
        boolean provisional;
        /** Resident children whose novelty was derived from this record's provisional one. */
        List<Node> dependents;
        int uses;
        int recordClass = -1;
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
        RecordKey parentKey = e.spec().parent();
        Node parent = parentKey == null ? null : nodes.get(parentKey);
        Node n = new Node(e);
        if (parentKey == null) {
            n.novel = true;
        } else if (parent == null) {
            n.novel = true;
            n.provisional = true;
            awaitingParent.computeIfAbsent(parentKey, k -> new ArrayList<>()).add(n);
        } else {
            n.novel = parent.novel && parent.uses == 0;
            if (parent.provisional) {
                n.provisional = true;
                dependOn(parent, n);
            }
        }
        n.base = inflation;
        n.wasParent = e.residentChildren() > 0;
        nodes.put(e.key(), n);
        if (e.spec().hasRow()) {
            enterClass(n);
            history.increment(e.key().hash());
        }
        List<Node> children = awaitingParent.remove(e.key());
        if (children != null) {
            for (Node child : children) {
                settle(child, n.novel && n.uses == 0, n.provisional ? n : null);
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
            resumed[n.recordClass]++;
            history.increment(e.key().hash());
            enterClass(n);
        }
        if (n.seq != 0) {
            droppable.remove(n);
            rank(n);
            droppable.add(n);
        }
    }

    @Override
    public void onRowChanged(RecordIndex.Entry e) {
        Node n = nodes.get(e.key());
        if (e.spec().hasRow()) {
            n.base = inflation;
            enterClass(n);
            history.increment(e.key().hash());
        }
    }

    @Override
    public void onAncestorUse(RecordIndex.Entry e) {
        nodes.get(e.key()).uses++;
    }

    @Override
    public void onRemove(RecordIndex.Entry e) {
        Node n = nodes.remove(e.key());
        RecordKey parentKey = e.spec().parent();
        if (n.provisional && parentKey != null) {
            List<Node> waiting = awaitingParent.get(parentKey);
            if (waiting != null && waiting.remove(n) && waiting.isEmpty()) {
                awaitingParent.remove(parentKey);
            }
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

    /** The share of records of {@code recordClass} that were resumed from, with one success and failure assumed. */
    double share(int recordClass) {
        return (resumed[recordClass] + 1.0) / (trials[recordClass] + 2.0);
    }

    private void rank(Node n) {
        double value;
        if (n.entry.spec().hasRow()) {
            value = share(n.recordClass);
        } else {
            value = n.wasParent && n.entry.residentChildren() == 0 ? TAIL_VALUE : CHAIN_VALUE;
        }
        n.priority = n.base + value;
        n.seq = ++enlisted;
    }

    /**
     * Gives {@code n}, whose novelty was provisional, the novelty its parent implies, moves its trial to the right
     * class and passes the change on to its dependents; {@code provisionalParent} is the parent when its own novelty
     * is still provisional.
     */
    private void settle(Node n, boolean novel, Node provisionalParent) {
        n.provisional = provisionalParent != null;
        if (provisionalParent != null) {
            dependOn(provisionalParent, n);
        }
        List<Node> dependents = n.dependents;
        n.dependents = null;
        if (n.novel != novel) {
            n.novel = novel;
            if (n.recordClass >= 0) {
                trials[n.recordClass]--;
                n.recordClass ^= 1;
                trials[n.recordClass]++;
            }
            if (n.seq != 0) {
                droppable.remove(n);
                rank(n);
                droppable.add(n);
            }
        }
        if (dependents != null) {
            for (Node d : dependents) {
                if (nodes.get(d.entry.key()) == d) {
                    settle(d, n.novel && n.uses == 0, n.provisional ? n : null);
                }
            }
        }
    }

    private static void dependOn(Node parent, Node child) {
        if (parent.dependents == null) {
            parent.dependents = new ArrayList<>(1);
        }
        parent.dependents.add(child);
    }

    private void enterClass(Node n) {
        int seen = Math.min(history.frequency(n.entry.key().hash()), MAX_HISTORY);
        n.recordClass = (n.novel ? 1 : 0) + 2 * seen;
        if (++trials[n.recordClass] >= COUNT_HALF_LIFE) {
            trials[n.recordClass] /= 2;
            resumed[n.recordClass] /= 2;
        }
    }
}
