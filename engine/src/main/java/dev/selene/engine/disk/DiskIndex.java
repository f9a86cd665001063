package dev.selene.engine.disk;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The index of records committed to the disk tier: each one's spec, file size and last use, their total size,
 * and the recency order in which the tier frees room when it is over its size.
 *
 * <p>Owned by one {@code RecordCatalog} (confined to its actor); no locks inside. Removing a record removes
 * its descendants with it, so no file ever outlives its parent's (a record with an incomplete chain could
 * never be restored).
 */
public final class DiskIndex {

    /** One committed record. */
    public record Entry(RecordSpec spec, long fileBytes, long lastUseNanos) {
        public RecordKey key() {
            return spec.key();
        }
    }

    private final LinkedHashMap<RecordKey, Entry> entries = new LinkedHashMap<>(1024, 0.75f, false);
    private final Map<RecordKey, List<RecordKey>> children = new HashMap<>();
    private long bytes;

    /** Adds (or replaces) a committed record. */
    public void put(RecordSpec spec, long fileBytes, long lastUseNanos) {
        Entry old = entries.putLast(spec.key(), new Entry(spec, fileBytes, lastUseNanos));
        if (old != null) {
            bytes -= old.fileBytes();
        } else if (spec.parent() != null) {
            children.computeIfAbsent(spec.parent(), k -> new ArrayList<>(2)).add(spec.key());
        }
        bytes += fileBytes;
    }

    /** The entry of {@code key} without counting a use; null when absent. */
    public Entry peek(RecordKey key) {
        return entries.get(key);
    }

    public boolean contains(RecordKey key) {
        return entries.containsKey(key);
    }

    /** Counts a use of {@code key}: it becomes the most recent. */
    public void touch(RecordKey key, long nowNanos) {
        Entry e = entries.get(key);
        if (e != null) {
            entries.putLast(key, new Entry(e.spec(), e.fileBytes(), nowNanos));
        }
    }

    /**
     * Refreshes the last use of {@code key} to {@code nowNanos} (never back) without making it more recent in the
     * order room is freed in: a descendant of it was used or published.
     */
    public void refresh(RecordKey key, long nowNanos) {
        Entry e = entries.get(key);
        if (e != null && nowNanos > e.lastUseNanos()) {
            entries.put(key, new Entry(e.spec(), e.fileBytes(), nowNanos)); // insertion order: the place is kept
        }
    }

    /** Removes {@code key} and every descendant; returns the removed entries, the record first. */
    public List<Entry> removeWithDescendants(RecordKey key) {
        List<Entry> removed = new ArrayList<>();
        ArrayList<RecordKey> todo = new ArrayList<>();
        todo.add(key);
        while (!todo.isEmpty()) {
            RecordKey k = todo.removeLast();
            Entry e = entries.remove(k);
            if (e == null) {
                continue;
            }
            bytes -= e.fileBytes();
            removed.add(e);
            List<RecordKey> kids = children.remove(k);
            if (kids != null) {
                todo.addAll(kids);
            }
            RecordKey parent = e.spec().parent();
            if (parent != null) {
                List<RecordKey> siblings = children.get(parent);
                if (siblings != null) {
                    siblings.remove(k);
                    if (siblings.isEmpty()) {
                        children.remove(parent);
                    }
                }
            }
        }
        return removed;
    }

    /**
     * The file bytes {@link #removeWithDescendants} would free at {@code key}, leaving out the records already in
     * {@code counted} and adding the others to it; the index unchanged.
     */
    public long subtreeBytes(RecordKey key, Set<RecordKey> counted) {
        long total = 0;
        ArrayList<RecordKey> todo = new ArrayList<>();
        todo.add(key);
        while (!todo.isEmpty()) {
            RecordKey k = todo.removeLast();
            Entry e = entries.get(k);
            if (e == null || !counted.add(k)) {
                continue;
            }
            total += e.fileBytes();
            List<RecordKey> kids = children.get(k);
            if (kids != null) {
                todo.addAll(kids);
            }
        }
        return total;
    }

    /**
     * Whether {@code test} holds for {@code key} or any descendant on disk (what {@link #removeWithDescendants} would
     * remove), the index unchanged.
     * {@code memo} keeps each answer found on the way, so that a caller asking about many records (each of a deep
     * chain's ancestors, say) walks every subtree once instead of once per ancestor; it is valid while the records
     * for which {@code test} holds and the subtrees whose answer it records stay as they are.
     */
    public boolean anyInSubtree(RecordKey key, Predicate<RecordKey> test,
                                Map<RecordKey, Boolean> memo) {
        Boolean known = memo.get(key);
        if (known != null) {
            return known;
        }
        // Depth first, children before their parent, without recursion (a chain may be thousands of records deep).
        ArrayList<RecordKey> stack = new ArrayList<>();
        stack.add(key);
        while (!stack.isEmpty()) {
            RecordKey k = stack.getLast();
            if (memo.containsKey(k)) {
                stack.removeLast();
                continue;
            }
            if (!entries.containsKey(k)) {
                memo.put(k, false);
                stack.removeLast();
                continue;
            }
            if (test.test(k)) {
                memo.put(k, true);
                stack.removeLast();
                continue;
            }
            List<RecordKey> kids = children.get(k);
            boolean pending = false;
            boolean any = false;
            if (kids != null) {
                for (RecordKey c : kids) {
                    Boolean m = memo.get(c);
                    if (m == null) {
                        stack.add(c);
                        pending = true;
                    } else {
                        any |= m;
                    }
                }
            }
            if (!pending) {
                memo.put(k, any);
                stack.removeLast();
            }
        }
        return memo.get(key);
    }

    /** The least recently used record, or null. */
    public Entry coldest() {
        return entries.isEmpty() ? null : entries.values().iterator().next();
    }

    /** Bytes of every committed file. */
    public long bytes() {
        return bytes;
    }

    public int size() {
        return entries.size();
    }

    /** Every entry, least recently used first (for listings and tests). */
    public List<Entry> entries() {
        return new ArrayList<>(entries.values());
    }
}
