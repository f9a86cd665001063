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
 * elsewhere) or parked (memory only), which records may be dropped (in the order its {@link EvictionPolicy}
 * chooses, least recently used by default) and the recency order in which parked ones are spilled.
 *
 * <p>Owned by one {@code RecordCatalog} (confined to its actor); no locks inside.
 *
 * <h2>Design</h2>
 * <pre>
 * Every entry is in at most one of two sets:
 *   droppable - unpinned and clean, or, when nothing durable exists (memory-only, memory-only eviction), a parked leaf: dropping
 *               it loses nothing a lookup could still reach; and, memory-only under a policy that ranks rows apart from
 *               pages, a parked record with a row and resident children, whose drop frees only its row's slots (the
 *               last ones of its list) and leaves it page-only. Its slot total (what drops would free) is the pool's
 *               clean count (keeping the intake free).
 *               The eviction policy orders it; the default, LRU, keeps an intrusive recency list.
 *   parked    - memory-only records that a spill or retirement must copy out before they may be dropped (pressure spill),
 *               in an intrusive recency list (cold end first).
 * Pinned clean records (a restore is copying out of them) and memory-only parents of resident children (but
 * those with a row, under a policy that drops rows apart) are in neither list; a pinned parked record stays in the
 * parked list, since a spill only reads it. Leaves go first in memory-only mode, so chains are evicted from the tail
 * and a resident record's ancestors stay resident; a resident child therefore keeps its parent, and the parent's
 * list membership follows its count of resident children, kept as records come and go (children that arrive before their
 * parent wait in a small map).
 *
 * Using a record moves it to the hot end and refreshes the last use of its resident ancestors without moving
 * them (max age), so a long shared prefix is not pushed ahead of the records that actually get used. An entry that
 * (re)joins a list because its state changed lands at the end its use tick belongs to: hot if it was used after
 * the current hot end, otherwise cold. That keeps every operation O(1) at the price of an approximate order for
 * those entries.
 * </pre>
 */
public final class RecordIndex {

    /** One resident record. Fields are the index's; read them through the accessors. */
    public static final class Entry {
        private RecordSpec spec;
        private SlotList slots;
        private long lastUseNanos;
        long useTick;
        private int pins;
        private int residentChildren;
        private boolean durable;
        private Membership set = Membership.NONE;
        /** While droppable: dropping it frees only its row (it has children), not all its slots. */
        private boolean listedRowOnly;
        Entry prev;
        Entry next;
        RecencyList inList;

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

        /**
         * Whether dropping this droppable record would drop only its row and keep its pages: it is memory-only,
         * carries a row, and other resident records hang from it. False when it is not droppable.
         */
        public boolean dropsRowOnly() {
            return set == Membership.DROPPABLE && listedRowOnly;
        }

        /** The index's use counter at this record's last use: larger means used later. */
        public long useTick() {
            return useTick;
        }
    }

    /** Which set an entry is in: at most one. */
    private enum Membership {
        NONE,
        DROPPABLE,
        PARKED
    }

    private final Map<RecordKey, Entry> entries = new HashMap<>();
    private final Map<RecordKey, Integer> childrenAwaitingParent = new HashMap<>();
    private final boolean parkedLeavesDroppable;
    private final int rowPieces;
    private final boolean dropRows;
    private final EvictionPolicy policy;
    private final RecencyList parked = new RecencyList();
    private long droppableSlots;
    private int droppableCount;
    private long tick;
    private long residentSlots;

    /**
     * An empty index that drops the least recently used first. With {@code parkedLeavesDroppable} (no disk, no
     * pool: memory-only eviction) a memory-only leaf counts as droppable; otherwise only clean records do.
     */
    public RecordIndex(boolean parkedLeavesDroppable) {
        this(parkedLeavesDroppable, new LruPolicy());
    }

    /** An empty index as above whose droppable records leave in the order {@code policy} chooses. */
    public RecordIndex(boolean parkedLeavesDroppable, EvictionPolicy policy) {
        this(parkedLeavesDroppable, policy, 0);
    }

    /**
     * An empty index as above in which, when {@code rowPieces} is positive (a row's slots, the last {@code
     * rowPieces} of a record's), a page-only record can take a row ({@link #addRow}) and, when the policy ranks rows
     * apart from their pages ({@link EvictionPolicy#dropsRowsApart}), a memory-only record with a row and resident
     * children is droppable too: dropping it drops its row and keeps its pages, which its children need. With
     * {@code rowPieces} 0 a record keeps what it was inserted with and is dropped whole or not at all.
     */
    public RecordIndex(boolean parkedLeavesDroppable, EvictionPolicy policy, int rowPieces) {
        if (rowPieces < 0 || rowPieces > 0 && !parkedLeavesDroppable) {
            throw new IllegalArgumentException("rows are dropped apart from their pages only in memory-only eviction");
        }
        this.parkedLeavesDroppable = parkedLeavesDroppable;
        this.policy = policy;
        this.rowPieces = rowPieces;
        this.dropRows = rowPieces > 0 && policy.dropsRowsApart();
    }

    /** What a drop did: the record left whole, or only its row did (its pages stay, page-only). */
    public record Dropped(Entry entry, SlotList freed, boolean whole) {
    }

    /** The policy that orders the droppable records. */
    public EvictionPolicy policy() {
        return policy;
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
        policy.onInsert(e);
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
        policy.onRemove(e);
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

    /**
     * The droppable record the policy drops next, removed from the index; null when nothing can be dropped. For an
     * index that never drops rows apart from their pages; otherwise {@link #dropNext} (a record others hang from
     * must not leave whole).
     */
    public Entry dropColdest() {
        Entry victim = policy.victim();
        if (victim != null && victim.listedRowOnly) {
            throw new IllegalStateException(victim.key() + " has resident children: drop its row with dropNext");
        }
        return victim == null ? null : remove(victim.key());
    }

    /**
     * Drops what the policy chooses next: a leaf whole, or the row of a record others hang from (its pages stay,
     * page-only, and its entry with them); null when nothing can be dropped.
     */
    public Dropped dropNext() {
        Entry victim = policy.victim();
        if (victim == null) {
            return null;
        }
        if (!victim.listedRowOnly) {
            remove(victim.key());
            return new Dropped(victim, victim.slots, true);
        }
        unlist(victim);
        int pages = victim.slots.count() - rowPieces;
        SlotList row = victim.slots.slice(pages, victim.slots.count());
        victim.slots = victim.slots.slice(0, pages);
        victim.spec = victim.spec.withRow(false);
        residentSlots -= rowPieces;
        policy.onRowChanged(victim);
        relist(victim);
        return new Dropped(victim, row, false);
    }

    /**
     * Gives page-only resident {@code spec.key()} the row of a publication copied whole into {@code slots} (its
     * pages first, then its row): the record keeps its own pages, takes the row's slots and counts as used now.
     * Returns the publication's page slots, which the caller frees. The record may be pinned (a restore reads
     * pages that do not move).
     */
    public SlotList addRow(RecordSpec spec, SlotList slots, long nowNanos) {
        Entry e = require(spec.key());
        int pages = e.slots.count();
        if (e.spec.hasRow() || !spec.hasRow() || slots.count() != pages + rowPieces || rowPieces == 0) {
            throw new IllegalStateException(spec.key() + " cannot take a row of " + slots.count() + " slots");
        }
        unlist(e);
        e.slots = SlotList.concat(e.slots, slots.slice(pages, slots.count()));
        e.spec = e.spec.withRow(true);
        residentSlots += rowPieces;
        e.lastUseNanos = nowNanos;
        e.useTick = ++tick;
        policy.onRowChanged(e);
        relist(e);
        return slots.slice(0, pages);
    }

    /** The resident entry for {@code key}, or null. */
    public Entry get(RecordKey key) {
        return entries.get(key);
    }

    public boolean contains(RecordKey key) {
        return entries.containsKey(key);
    }

    /**
     * Records a use of {@code key} (a publication found it present): it moves to the hot end of its list, and its
     * resident ancestors' last use is refreshed without moving them.
     */
    public void touch(RecordKey key, long nowNanos) {
        touch(key, nowNanos, EvictionPolicy.Use.REPUBLISHED);
    }

    /** Records a use of {@code key} as above, telling the policy how it was used. */
    public void touch(RecordKey key, long nowNanos, EvictionPolicy.Use use) {
        Entry e = entries.get(key);
        if (e == null) {
            return;
        }
        e.lastUseNanos = nowNanos;
        e.useTick = ++tick;
        if (e.set == Membership.PARKED) {
            parked.moveHot(e);
        }
        policy.onUse(e, use);
        RecordKey up = e.spec.parent();
        while (up != null) {
            Entry a = entries.get(up);
            if (a == null) {
                break;
            }
            a.lastUseNanos = nowNanos;
            policy.onAncestorUse(a);
            up = a.spec.parent();
        }
    }

    /**
     * Refreshes the last use of resident {@code key} to {@code nowNanos} (never back) without moving it in any list
     * or telling the policy: a descendant of it was published, or used in another tier. Nothing when it is not
     * resident.
     */
    public void refresh(RecordKey key, long nowNanos) {
        Entry e = entries.get(key);
        if (e != null && nowNanos > e.lastUseNanos) {
            e.lastUseNanos = nowNanos;
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
        return droppableSlots;
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
        int dropCount = 0;
        for (Entry e : entries.values()) {
            slots += e.slots.count();
            Membership want = setFor(e);
            if (e.set != want || (want == Membership.PARKED) != parked.contains(e)) {
                throw new IllegalStateException(e.key() + " is in the wrong set");
            }
            if (want == Membership.DROPPABLE) {
                if (e.listedRowOnly != rowOnly(e)) {
                    throw new IllegalStateException(e.key() + " is listed as dropping " + (e.listedRowOnly
                            ? "its row only" : "whole") + ", would not");
                }
                dropSlots += dropWeight(e);
                dropCount++;
            } else if (want == Membership.PARKED) {
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
        if (slots != residentSlots || dropSlots != droppableSlots || parkedSlotsSeen != parked.slots) {
            throw new IllegalStateException("slot totals disagree: resident " + slots + "/" + residentSlots
                    + ", droppable " + dropSlots + "/" + droppableSlots + ", parked " + parkedSlotsSeen + "/"
                    + parked.slots);
        }
        if (dropCount != droppableCount || policy.size() != dropCount) {
            throw new IllegalStateException("droppable records disagree: index " + dropCount + "/" + droppableCount
                    + ", " + policy.name() + " policy " + policy.size());
        }
    }

    private Entry require(RecordKey key) {
        Entry e = entries.get(key);
        if (e == null) {
            throw new IllegalStateException(key + " is not resident");
        }
        return e;
    }

    private Membership setFor(Entry e) {
        if (e.durable) {
            return e.pins > 0 ? Membership.NONE : Membership.DROPPABLE;
        }
        if (parkedLeavesDroppable) {
            boolean droppable = e.residentChildren == 0 || dropRows && e.spec.hasRow();
            return e.pins == 0 && droppable ? Membership.DROPPABLE : Membership.NONE;
        }
        return Membership.PARKED;
    }

    /** Whether dropping {@code e} (when droppable) drops its row only: memory-only, with a row and children. */
    private boolean rowOnly(Entry e) {
        return dropRows && !e.durable && e.residentChildren > 0 && e.spec.hasRow();
    }

    /** The slots dropping {@code e} frees now: its row's when it keeps its pages, else all of them. */
    private int dropWeight(Entry e) {
        return rowOnly(e) ? rowPieces : e.slots.count();
    }

    private void relist(Entry e) {
        Membership want = setFor(e);
        if (e.set == want && (want != Membership.DROPPABLE || e.listedRowOnly == rowOnly(e))) {
            return;
        }
        unlist(e);
        e.set = want;
        if (want == Membership.PARKED) {
            parked.addByUse(e);
        } else if (want == Membership.DROPPABLE) {
            e.listedRowOnly = rowOnly(e);
            droppableSlots += dropWeight(e);
            droppableCount++;
            policy.enlist(e);
        }
    }

    private void unlist(Entry e) {
        if (e.set == Membership.PARKED) {
            parked.unlink(e);
        } else if (e.set == Membership.DROPPABLE) {
            droppableSlots -= e.listedRowOnly ? rowPieces : e.slots.count(); // as listed: slots change unlisted
            droppableCount--;
            policy.delist(e);
        }
        e.set = Membership.NONE;
    }
}
