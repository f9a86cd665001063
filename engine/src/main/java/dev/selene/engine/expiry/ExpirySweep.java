package dev.selene.engine.expiry;

import dev.selene.engine.key.RecordKey;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The pure core of the max-age sweep: given the records of one tier, which ones a sweep removes, in the
 * order they must go. A tier (memory and disk on a host, a manager's store in the pool) owns the records and does
 * the removal; this class only decides.
 *
 * <pre>
 * Rules (max age):
 *   - A record is stale when it has not been used for longer than the max age: now - lastUse > maxAge.
 *   - Only leaves go: a record with a child among the tier's records is not a leaf, so it stays while any
 *     descendant stays. A match needs the whole chain, so removing an ancestor would strand its descendants.
 *   - Leaves are taken oldest last use first, and the walk stops at the first fresh leaf. A parent whose
 *     last child went in this sweep is a leaf from then on and joins the walk at its own last use.
 *   - A use or publication refreshes the last use of every ancestor (the tier's job), so an ancestor is never
 *     older than its freshest descendant and a stale chain leaves from its tips inward.
 *   - A busy leaf (pinned by a restore, being copied) is passed over; it and its ancestors wait for the next
 *     sweep.
 *   - At most {@code maxRecords} records (64 by default) per sweep; the rest waits for the next one.
 * The sweep looks at every record once to count children (thousands on a serving host: microseconds, once
 * a minute at most) and keeps only the stale leaves in a heap.
 * </pre>
 */
public final class ExpirySweep {

    /** Most records one sweep removes. */
    public static final int MAX_RECORDS_PER_SWEEP = 64;

    /** Interval between two timed sweeps; an operator may run one at once besides (the admin API's expire). */
    public static final long SWEEP_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

    private ExpirySweep() {
    }

    /**
     * One record as the sweep sees it.
     *
     * @param key          the record
     * @param parent       its parent, or null for a root
     * @param lastUseNanos its last use on the tier's clock
     * @param busy         whether it may not be removed now (pinned or being copied)
     */
    public record Candidate(RecordKey key, RecordKey parent, long lastUseNanos, boolean busy) {
    }

    /**
     * The keys a sweep at {@code nowNanos} removes, in removal order (every record after its children), at most
     * {@code maxRecords}; empty when no leaf is stale.
     */
    public static List<RecordKey> plan(Collection<Candidate> records, long nowNanos, long maxAgeNanos,
                                       int maxRecords) {
        return plan(records, Set.of(), nowNanos, maxAgeNanos, maxRecords);
    }

    /**
     * As {@link #plan(Collection, long, long, int)}, where the records of {@code alsoParents} (children the tier
     * does not list, such as publications in flight) keep their parents from being leaves.
     */
    public static List<RecordKey> plan(Collection<Candidate> records, Collection<RecordKey> alsoParents,
                                       long nowNanos, long maxAgeNanos, int maxRecords) {
        if (maxAgeNanos <= 0) {
            throw new IllegalArgumentException("max age must be positive, was " + maxAgeNanos + " ns");
        }
        if (maxRecords <= 0 || records.isEmpty()) {
            return List.of();
        }
        Map<RecordKey, Candidate> byKey = new HashMap<>(records.size() * 2);
        for (Candidate c : records) {
            byKey.put(c.key(), c);
        }
        Map<RecordKey, Integer> children = new HashMap<>();
        for (Candidate c : records) {
            if (c.parent() != null && byKey.containsKey(c.parent())) {
                children.merge(c.parent(), 1, Integer::sum);
            }
        }
        for (RecordKey parent : alsoParents) {
            if (parent != null && byKey.containsKey(parent)) {
                children.merge(parent, 1, Integer::sum);
            }
        }
        PriorityQueue<Candidate> leaves = new PriorityQueue<>(OLDEST_FIRST);
        for (Candidate c : records) {
            if (!children.containsKey(c.key()) && stale(c, nowNanos, maxAgeNanos)) {
                leaves.add(c);
            }
        }
        List<RecordKey> planned = new ArrayList<>(Math.min(maxRecords, leaves.size()));
        while (!leaves.isEmpty() && planned.size() < maxRecords) {
            Candidate leaf = leaves.poll();
            if (leaf.busy()) {
                continue;
            }
            planned.add(leaf.key());
            Candidate parent = leaf.parent() == null ? null : byKey.get(leaf.parent());
            if (parent != null && children.merge(parent.key(), -1, Integer::sum) == 0) {
                children.remove(parent.key());
                if (stale(parent, nowNanos, maxAgeNanos)) {
                    leaves.add(parent);
                }
            }
        }
        return List.copyOf(planned);
    }

    /**
     * Leaves by last use, oldest first; ties by key, so a plan does not depend on the order records were listed in.
     */
    private static final Comparator<Candidate> OLDEST_FIRST = Comparator.comparingLong(Candidate::lastUseNanos)
            .thenComparing(Candidate::key, Comparator.comparing(RecordKey::namespace)
                    .thenComparing(RecordKey::hash, Long::compareUnsigned));

    private static boolean stale(Candidate c, long nowNanos, long maxAgeNanos) {
        return nowNanos - c.lastUseNanos() > maxAgeNanos;
    }

    /** The parent → children relation of a set of records, for removing a record with its descendants. */
    public static final class Subtrees {
        private final Map<RecordKey, List<RecordKey>> children = new HashMap<>();
        private final Set<RecordKey> busy = new HashSet<>();

        /** The relation among {@code records}. */
        public Subtrees(Collection<Candidate> records) {
            for (Candidate c : records) {
                if (c.parent() != null) {
                    children.computeIfAbsent(c.parent(), k -> new ArrayList<>(2)).add(c.key());
                }
                if (c.busy()) {
                    busy.add(c.key());
                }
            }
        }

        /** {@code root} and its descendants, every record after all of its descendants. */
        public List<RecordKey> deepestFirst(RecordKey root) {
            List<RecordKey> preorder = new ArrayList<>();
            ArrayDeque<RecordKey> stack = new ArrayDeque<>();
            stack.push(root);
            while (!stack.isEmpty()) {
                RecordKey k = stack.pop();
                preorder.add(k);
                for (RecordKey child : children.getOrDefault(k, List.of())) {
                    stack.push(child);
                }
            }
            // In preorder every record precedes its descendants; reversed, every record follows them.
            return preorder.reversed();
        }

        /** Whether any of {@code keys} is busy. */
        public boolean anyBusy(List<RecordKey> keys) {
            if (busy.isEmpty()) {
                return false;
            }
            for (RecordKey k : keys) {
                if (busy.contains(k)) {
                    return true;
                }
            }
            return false;
        }
    }
}
