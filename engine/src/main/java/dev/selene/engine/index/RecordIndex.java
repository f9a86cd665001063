package dev.selene.engine.index;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotList;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The index of records resident in host memory: where each one's slots are, whether it is clean (durable
 * elsewhere) or parked (memory only), and the recency order in which clean records are dropped and parked
 * ones spilled.
 *
 * <p>Owned by one {@code RecordCatalog} (confined to its actor); no locks inside.
 *
 * <h2>Design</h2>
 * <pre>
 * Every entry sits in at most one of two intrusive recency lists (cold end first):
 *   droppable - unpinned and clean, or, when nothing durable exists (memory-only, B6), a parked leaf: dropping
 *               it loses nothing a lookup could still reach. Its slot total is the pool's clean count (B3).
 *   parked    - memory-only records that a spill or retirement must copy out before they may be dropped (B4).
 * Pinned clean records (a restore is copying out of them) and memory-only parents of resident children are
 * in neither list; a pinned parked record stays in the parked list, since a spill only reads it. Leaves go first in memory-only mode, so chains are evicted from the tail and a resident record's
 * ancestors stay resident; a resident child therefore keeps its parent, and the parent's list membership
 * follows its count of resident children, kept as records come and go (children that arrive before their
 * parent wait in a small map).
 *
 * Using a record moves it to the hot end and refreshes the last use of its resident ancestors without moving
 * them (B18), so a long shared prefix is not pushed ahead of the records that actually get used. An entry that
 * (re)joins a list because its state changed lands at the end its use tick belongs to: hot if it was used after
 * the current hot end, otherwise cold. That keeps every operation O(1) at the price of an approximate order for
 * those entries.
 * </pre>
 */
public final class RecordIndex {

    /** One resident record. Fields are the index's; read them through the accessors. */
    public static final class Entry {
        private final RecordSpec spec;
        private final SlotList slots;
        private long lastUseNanos;
        private long useTick;
        private int pins;
        private int residentChildren;
        private boolean durable;
        private Entry prev;
        private Entry next;
        private LruList list;

        private Entry(RecordSpec spec, SlotList slots) {
            this.spec = spec;
            this.slots = slots;
        }

        public RecordSpec spec() {
            return spec;
        }

        public RecordKey key() {
            return spec.key();
        }

        public SlotList slots() {
            return slots;
        }

        public long lastUseNanos() {
            return lastUseNanos;
        }

        public boolean durable() {
            return durable;
        }

        public int pins() {
            return pins;
        }

        public int residentChildren() {
            return residentChildren;
        }
    }

    private final Map<RecordKey, Entry> entries = new HashMap<>();
    private final Map<RecordKey, Integer> childrenAwaitingParent = new HashMap<>();
    private final boolean parkedLeavesDroppable;
    private final LruList droppable = new LruList();
    private final LruList parked = new LruList();
    private long tick;
    private long residentSlots;

    /**
     * An empty index. With {@code parkedLeavesDroppable} (no disk, no pool: B6) a memory-only leaf counts as
     * droppable; otherwise only clean records do.
     */
    public RecordIndex(boolean parkedLeavesDroppable) {
        this.parkedLeavesDroppable = parkedLeavesDroppable;
    }

    /** Adds a record that has just become resident; it starts parked unless {@code durable}. */
    public Entry insert(RecordSpec spec, SlotList slots, boolean durable, long nowNanos) {
        RecordKey key = spec.key();
        if (entries.containsKey(key)) {
            throw new IllegalStateException(key + " is already resident");
        }
        Entry e = new Entry(spec, slots);
        e.durable = durable;
        e.lastUseNanos = nowNanos;
        e.useTick = ++tick;
        Integer waiting = childrenAwaitingParent.remove(key);
        e.residentChildren = waiting == null ? 0 : waiting;
        entries.put(key, e);
        residentSlots += slots.count();
        if (spec.parent() != null) {
            Entry parent = entries.get(spec.parent());
            if (parent != null) {
                parent.residentChildren++;
                relist(parent);
            } else {
                childrenAwaitingParent.merge(spec.parent(), 1, Integer::sum);
            }
        }
        relist(e);
        return e;
    }

    /** Removes a record and returns its entry (the caller releases its slots); null when absent. */
    public Entry remove(RecordKey key) {
        Entry e = entries.remove(key);
        if (e == null) {
            return null;
        }
        unlist(e);
        residentSlots -= e.slots.count();
        if (e.residentChildren > 0) {
            childrenAwaitingParent.put(key, e.residentChildren);
        }
        RecordKey parentKey = e.spec.parent();
        if (parentKey != null) {
            Entry parent = entries.get(parentKey);
            if (parent != null) {
                parent.residentChildren--;
                relist(parent);
            } else {
                childrenAwaitingParent.computeIfPresent(parentKey, (k, n) -> n > 1 ? n - 1 : null);
            }
        }
        return e;
    }

    /** The coldest droppable record, removed from the index; null when nothing can be dropped. */
    public Entry dropColdest() {
        Entry coldest = droppable.head;
        return coldest == null ? null : remove(coldest.key());
    }

    /** The resident entry for {@code key}, or null. */
    public Entry get(RecordKey key) {
        return entries.get(key);
    }

    public boolean contains(RecordKey key) {
        return entries.containsKey(key);
    }

    /**
     * Records a use of {@code key}: it moves to the hot end of its list, and its resident ancestors' last use is
     * refreshed without moving them.
     */
    public void touch(RecordKey key, long nowNanos) {
        Entry e = entries.get(key);
        if (e == null) {
            return;
        }
        e.lastUseNanos = nowNanos;
        e.useTick = ++tick;
        if (e.list != null) {
            LruList l = e.list;
            l.unlink(e);
            l.addHot(e);
        }
        RecordKey up = e.spec.parent();
        while (up != null) {
            Entry a = entries.get(up);
            if (a == null) {
                break;
            }
            a.lastUseNanos = nowNanos;
            up = a.spec.parent();
        }
    }

    /** Pins a record so it cannot be dropped while it is being copied out; pins nest. */
    public void pin(RecordKey key) {
        Entry e = require(key);
        e.pins++;
        relist(e);
    }

    /** Releases one pin taken by {@link #pin}. */
    public void unpin(RecordKey key) {
        Entry e = require(key);
        if (e.pins == 0) {
            throw new IllegalStateException(key + " is not pinned");
        }
        e.pins--;
        relist(e);
    }

    /** Marks a record durable (its spill or retirement committed): from now on it is clean. */
    public void markDurable(RecordKey key) {
        Entry e = require(key);
        e.durable = true;
        relist(e);
    }

    /** Marks a clean record parked again: its durable copy is gone, so it must be spilled before it is dropped. */
    public void markParked(RecordKey key) {
        Entry e = require(key);
        e.durable = false;
        relist(e);
    }

    /** The resident descendants of {@code key} (children before grandchildren); a scan, for rare events only. */
    public List<Entry> residentDescendants(RecordKey key) {
        Map<RecordKey, List<Entry>> byParent = new HashMap<>();
        for (Entry e : entries.values()) {
            if (e.spec.parent() != null) {
                byParent.computeIfAbsent(e.spec.parent(), k -> new ArrayList<>()).add(e);
            }
        }
        List<Entry> out = new ArrayList<>();
        java.util.ArrayDeque<RecordKey> todo = new java.util.ArrayDeque<>();
        todo.add(key);
        while (!todo.isEmpty()) {
            for (Entry c : byParent.getOrDefault(todo.poll(), List.of())) {
                out.add(c);
                todo.add(c.key());
            }
        }
        return out;
    }

    /** The parked ancestors of {@code e} that are resident, nearest first, up to the first that is not. */
    public List<Entry> parkedAncestors(Entry e) {
        List<Entry> out = new ArrayList<>();
        RecordKey up = e.spec.parent();
        while (up != null) {
            Entry a = entries.get(up);
            if (a == null || a.durable) {
                break;
            }
            out.add(a);
            up = a.spec.parent();
        }
        return out;
    }

    /** Up to {@code max} parked records, coldest first, without changing anything. */
    public List<Entry> coldestParked(int max) {
        List<Entry> out = new ArrayList<>(Math.min(max, 64));
        for (Entry e = parked.head; e != null && out.size() < max; e = e.next) {
            out.add(e);
        }
        return out;
    }

    /** Slots held by droppable records: the pool's clean count. */
    public long droppableSlots() {
        return droppable.slots;
    }

    /** Slots held by parked (memory-only) records. */
    public long parkedSlots() {
        return parked.slots;
    }

    /** Slots held by every resident record. */
    public long residentSlots() {
        return residentSlots;
    }

    /** Number of resident records. */
    public int size() {
        return entries.size();
    }

    /** Every resident entry, in no particular order (for status pages and tests). */
    public Iterable<Entry> entries() {
        return entries.values();
    }

    /**
     * Checks list membership and slot totals against the entries; an {@link IllegalStateException} names the
     * first inconsistency.
     */
    public void checkInvariants() {
        long slots = 0;
        long dropSlots = 0;
        long parkedSlotsSeen = 0;
        for (Entry e : entries.values()) {
            slots += e.slots.count();
            LruList want = listFor(e);
            if (e.list != want) {
                throw new IllegalStateException(e.key() + " is in the wrong recency list");
            }
            if (want == droppable) {
                dropSlots += e.slots.count();
            } else if (want == parked) {
                parkedSlotsSeen += e.slots.count();
            }
            int children = 0;
            for (Entry c : entries.values()) {
                if (e.key().equals(c.spec.parent())) {
                    children++;
                }
            }
            if (children != e.residentChildren) {
                throw new IllegalStateException(e.key() + " counts " + e.residentChildren + " resident children, has "
                        + children);
            }
        }
        if (slots != residentSlots || dropSlots != droppable.slots || parkedSlotsSeen != parked.slots) {
            throw new IllegalStateException("slot totals disagree: resident " + slots + "/" + residentSlots
                    + ", droppable " + dropSlots + "/" + droppable.slots + ", parked " + parkedSlotsSeen + "/"
                    + parked.slots);
        }
    }

    private Entry require(RecordKey key) {
        Entry e = entries.get(key);
        if (e == null) {
            throw new IllegalStateException(key + " is not resident");
        }
        return e;
    }

    private LruList listFor(Entry e) {
        if (e.durable) {
            return e.pins > 0 ? null : droppable;
        }
        if (parkedLeavesDroppable) {
            return e.pins == 0 && e.residentChildren == 0 ? droppable : null;
        }
        return parked;
    }

    private void relist(Entry e) {
        LruList want = listFor(e);
        if (e.list == want) {
            return;
        }
        unlist(e);
        if (want != null) {
            if (want.tail == null || e.useTick > want.tail.useTick) {
                want.addHot(e);
            } else {
                want.addCold(e);
            }
        }
    }

    private void unlist(Entry e) {
        if (e.list != null) {
            e.list.unlink(e);
        }
    }

    /** An intrusive doubly linked recency list: head is the coldest entry, tail the hottest. */
    private static final class LruList {
        Entry head;
        Entry tail;
        long slots;

        void addHot(Entry e) {
            e.prev = tail;
            e.next = null;
            if (tail == null) {
                head = e;
            } else {
                tail.next = e;
            }
            tail = e;
            e.list = this;
            slots += e.slots.count();
        }

        void addCold(Entry e) {
            e.next = head;
            e.prev = null;
            if (head == null) {
                tail = e;
            } else {
                head.prev = e;
            }
            head = e;
            e.list = this;
            slots += e.slots.count();
        }

        void unlink(Entry e) {
            if (e.prev == null) {
                head = e.next;
            } else {
                e.prev.next = e.next;
            }
            if (e.next == null) {
                tail = e.prev;
            } else {
                e.next.prev = e.prev;
            }
            e.prev = null;
            e.next = null;
            e.list = null;
            slots -= e.slots.count();
        }
    }
}
