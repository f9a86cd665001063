package dev.selene.engine.expiry;

import dev.selene.engine.key.RecordKey;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The pure core of the max-age sweep: given the records of one tier, which ones a sweep removes, in the
 * order they must go. A tier (memory, disk, pool) owns the records and does the removal; this class only
 * decides.
 *
 * <pre>
 * Rules (max age, max age):
 *   - A record is stale when it has not been used for longer than the max age: now - lastUse > maxAge.
 *   - Records are visited oldest last use first; the walk ends at the first fresh record (a use refreshes the
 *     last use of every ancestor, so once one record is fresh every later one is too, and in particular the
 *     first fresh leaf ends it).
 *   - Removing a record removes its descendants: they would be unreachable, since a match needs the whole
 *     chain. They go deepest first, so a sweep cut short by its budget never leaves a child without its parent.
 *   - A subtree holding a busy record (pinned by a restore, being copied) is left for the next sweep.
 *   - At most {@code maxRecords} records (64 by default) per sweep; the rest waits for the next one.
 * The sweep looks at every record once to find the stale ones (thousands on a serving host: microseconds, once
 * a minute at most) and sorts only those.
 * </pre>
 */
public final class ExpirySweep {

    /** Most records one sweep removes. */
    public static final int MAX_RECORDS_PER_SWEEP = 64;

    /** Shortest interval between two sweeps. */
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
     * The keys a sweep at {@code nowNanos} removes, in removal order (descendants before their ancestors), at most
     * {@code maxRecords}; empty when nothing is stale.
     */
    public static List<RecordKey> plan(Collection<Candidate> records, long nowNanos, long maxAgeNanos,
                                       int maxRecords) {
        if (maxAgeNanos <= 0) {
            throw new IllegalArgumentException("max age must be positive, was " + maxAgeNanos + " ns");
        }
        List<Candidate> stale = new ArrayList<>();
        for (Candidate c : records) {
            if (nowNanos - c.lastUseNanos() > maxAgeNanos) {
                stale.add(c);
            }
        }
        if (stale.isEmpty() || maxRecords <= 0) {
            return List.of();
        }
        stale.sort(Comparator.comparingLong(Candidate::lastUseNanos));
        Subtrees tree = new Subtrees(records);
        LinkedHashSet<RecordKey> planned = new LinkedHashSet<>();
        for (Candidate c : stale) {
            if (planned.contains(c.key())) {
                continue;
            }
            List<RecordKey> subtree = tree.deepestFirst(c.key());
            if (tree.anyBusy(subtree)) {
                continue;
            }
            for (RecordKey k : subtree) {
                if (planned.size() == maxRecords) {
                    return List.copyOf(planned);
                }
                planned.add(k);
            }
        }
        return List.copyOf(planned);
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
