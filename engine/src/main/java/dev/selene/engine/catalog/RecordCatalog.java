package dev.selene.engine.catalog;

import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.disk.DiskIndex;
import dev.selene.engine.expiry.ExpirySweep;
import dev.selene.engine.index.ChainMatch;
import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.LruPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Everything a node knows about its records, held once: chain links, where each record lives (memory slots, a
 * committed disk file), pins, state (in flight, resident dirty or clean, being written, durable only), per-tier
 * recency and age. The match rule, the eviction choice, the spill choice and expiry are computed here and
 * nowhere else; the actors that own a catalog only execute what it answers and report back.
 *
 * <p>Confined to the one actor that owns it; no locks inside. Every time is read from one injected clock.
 *
 * <h2>Design</h2>
 * <pre>
 * A record is in exactly one of these states:
 *   in flight     - a publication was admitted at its key and is copying it in; nothing else is known yet.
 *   dirty         - resident in memory and in no durable tier: a spill must copy it out before it may be
 *                   dropped (with no durable tier at all, a dirty leaf is droppable as is: memory-only).
 *   being written - dirty and pinned while its file is written.
 *   clean         - resident and committed on disk: its memory can be dropped at once.
 *   durable only  - committed on disk, not resident.
 * The memory view is a {@link RecordIndex} (slots, pins, recency lists whose slot total is the pool's clean
 * count) and the disk view a {@link DiskIndex} (file bytes, disk recency). The index's clean flag is derived:
 * it is set and cleared only here, as the disk view changes, and the invariant check holds it equal to "has a
 * committed file".
 *
 * Spill choice (ancestors first): a write starts only when the record's parent has committed. Choosing a dirty
 * record whose ancestors are uncommitted starts its root-most uncommitted ancestor instead and remembers that
 * the record wants a write; records that want one are considered first in the next plan, which the owner runs
 * when the ancestor's commit is reported. A dirty chain whose root-most uncommitted ancestor is in no state at
 * all (abandoned, dropped, expired) can never be written, nor matched: it is dropped. Writes started for
 * ancestors count toward the pressure target and the in-flight cap.
 *
 * A disk file is never kept without its parent's file (removing a file removes its descendants' files), so a
 * durable child never hangs from a missing parent. A resident record whose file goes becomes dirty again.
 * </pre>
 */
public final class RecordCatalog {

    /** Where a record of a match is restored from. */
    public enum Where {
        MEMORY,
        DISK
    }

    /** The state of a record (see the class comment). */
    public enum State {
        IN_FLIGHT("in_flight"),
        DIRTY("dirty"),
        BEING_WRITTEN("being_written"),
        CLEAN("clean"),
        DURABLE_ONLY("durable_only");

        private final String label;

        State(String label) {
            this.label = label;
        }

        /** A short lowercase label for the admin API. */
        public String label() {
            return label;
        }
    }

    /** What a publication at a key may do. */
    public enum Admission {
        /** Nothing is known at the key: the publication goes ahead and the key is in flight. */
        ADMITTED,
        /** A complete record exists at the key in some tier; its last use was refreshed. */
        PRESENT,
        /** Another publication of the key is in flight. */
        IN_FLIGHT
    }

    /** One record of a match and the tier it will come from. */
    public record Located(RecordSpec spec, Where where) {
    }

    /**
     * The match of a chain (the deepest record whose whole chain is present and which has a row), root first, and
     * when it is empty a sentence saying why.
     */
    public record Match(List<Located> records, String missReason) {
        public int depth() {
            return records.size();
        }
    }

    /**
     * What the owner must carry out after a change: free these slots, delete these files. {@code removed} are the
     * keys that left some tier.
     */
    public record Removal(List<RecordKey> removed, List<SlotList> slots, List<RecordKey> files,
                          List<RecordKey> rowsDropped) {
        static Removal empty() {
            return new Removal(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        }

        public boolean isEmpty() {
            return removed.isEmpty() && slots.isEmpty() && files.isEmpty() && rowsDropped.isEmpty();
        }
    }

    /**
     * Writes to start now (each record pinned, its disk room reserved), the files removed to make room, and the
     * orphans dropped (dirty chains that can never be written).
     */
    public record SpillPlan(List<SpillStart> start, Removal removal, Removal orphans) {
    }

    /** One write to start: the record and the slots its bytes are in. */
    public record SpillStart(RecordSpec spec, SlotList slots) {
    }

    /** How a reported commit ended. */
    public enum Commit {
        /** The record is clean: its file is committed. */
        COMMITTED,
        /** The parent's file left the disk while the record was written: the owner deletes the file again. */
        PARENT_GONE,
        /**
         * The record left memory while it was written: the owner deletes the file. (Nothing removes a record being
         * written today; this keeps a later change from committing a file nobody knows.)
         */
        RECORD_GONE
    }

    /** A record found on disk at start, {@code ageNanos} after its last use. */
    public record Recovered(RecordSpec spec, long fileBytes, long ageNanos) {
    }

    /** One record as listings show it. */
    public record Info(RecordSpec spec, State state, Where where, int slots, int pins, boolean onDisk,
                       long idleNanos) {
        public RecordKey key() {
            return spec.key();
        }
    }

    /** One record, its chain (present records, root first, ending at it) and whether the chain reaches a root. */
    public record Description(Info record, List<Info> chain, boolean complete) {
    }

    /** The outcome of an operator's eviction. */
    public enum EvictResult {
        EVICTED,
        NOT_FOUND,
        BUSY
    }

    /** An operator's eviction: what happened and what the owner must carry out. */
    public record Eviction(EvictResult result, Removal removal) {
    }

    /** The figures of the catalog. */
    public record Stats(int residentRecords, long residentSlots, long cleanSlots, long dirtySlots, int inFlight,
                        int diskRecords, long diskBytes, int writing, long writingSlots) {
    }

    /** A write in flight: the disk room it reserved and the slots it reads. */
    private record Write(long fileBytes, int slots) {
    }

    /** Records listed per spill plan from the cold end of the dirty list. */
    static final int SPILL_CANDIDATES = 256;

    private static final Comparator<RecordKey> KEY_ORDER = Comparator.comparing(RecordKey::namespace)
            .thenComparing(RecordKey::hash, Long::compareUnsigned);

    private final Layout layout;
    private final LongSupplier clock;
    private final boolean durableTier;
    private long diskCapacityBytes;
    private final int spillCap;
    private final RecordIndex memory;
    private final DiskIndex disk = new DiskIndex();
    private final Map<RecordKey, RecordSpec> inFlight = new HashMap<>();
    /** The parent each publication in flight holds pinned (see {@code holdParent}). */
    private final Map<RecordKey, RecordKey> parentsHeld = new HashMap<>();
    private final Map<RecordKey, Write> writing = new HashMap<>();
    /** Read pins of durable copies that restores are reading: room is never made by removing them. */
    private final Map<RecordKey, Integer> filePins = new HashMap<>();
    /**
     * A lower capacity asked for that files in use (writes in flight hang from them, restores read them) kept the
     * tier above; -1 when none. {@link #settleCapacity} applies it once they are no longer in use.
     */
    private long pendingCapacity = -1;
    private final WriteWants wantWrite = new WriteWants();
    private long writingSlots;
    private long reservedBytes;

    /**
     * A catalog for {@code layout}. {@code diskCapacityBytes} is 0 without a disk tier; then the catalog is
     * memory-only and dirty leaves are droppable. At most {@code spillCap} writes are in flight at once.
     */
    public RecordCatalog(Layout layout, long diskCapacityBytes, int spillCap, LongSupplier clock) {
        this(layout, diskCapacityBytes, spillCap, clock, new LruPolicy());
    }

    /** A catalog as above whose memory drops records in the order {@code policy} chooses (LRU above). */
    public RecordCatalog(Layout layout, long diskCapacityBytes, int spillCap, LongSupplier clock,
                         EvictionPolicy policy) {
        this(layout, diskCapacityBytes > 0, diskCapacityBytes, spillCap, clock, policy);
    }

    /**
     * A catalog with a durable tier or none ({@code durableTier}) whose capacity is {@code durableCapacityBytes}
     * now; with a durable tier the capacity may start at 0 and be set later ({@link #setDurableCapacity}), when it
     * is learnt from the tier (a pool's managers), and until then nothing is written.
     */
    public RecordCatalog(Layout layout, boolean durableTier, long durableCapacityBytes, int spillCap,
                         LongSupplier clock, EvictionPolicy policy) {
        if (spillCap < 1) {
            throw new IllegalArgumentException("spill in-flight cap must be at least 1, was " + spillCap);
        }
        if (durableCapacityBytes < 0 || (!durableTier && durableCapacityBytes > 0)) {
            throw new IllegalArgumentException("durable capacity " + durableCapacityBytes + " is invalid "
                    + (durableTier ? "for a durable tier" : "without a durable tier"));
        }
        this.layout = layout;
        this.clock = clock;
        this.durableTier = durableTier;
        this.diskCapacityBytes = durableCapacityBytes;
        this.spillCap = spillCap;
        this.memory = new RecordIndex(!durableTier, policy, durableTier ? 0 : layout.rowPieces());
    }

    // ---- publication ----

    /** Admits a publication at {@code spec}'s key, or says why not; a duplicate refreshes the record's last use. */
    public Admission admit(RecordSpec spec) {
        RecordKey key = spec.key();
        if (inFlight.containsKey(key)) {
            return Admission.IN_FLIGHT;
        }
        long now = clock.getAsLong();
        RecordIndex.Entry held = memory.get(key);
        if (held != null && !durableTier && spec.hasRow() && !held.spec().hasRow()) {
            inFlight.put(key, spec); // the row joins the pages held (see resident)
            holdParent(spec);
            return Admission.ADMITTED;
        }
        if (held != null) {
            memory.touch(key, now);
            refreshAncestors(spec.parent(), now);
            return Admission.PRESENT;
        }
        if (disk.contains(key)) {
            disk.touch(key, now);
            refreshAncestors(spec.parent(), now);
            return Admission.PRESENT;
        }
        inFlight.put(key, spec);
        holdParent(spec);
        return Admission.ADMITTED;
    }

    /**
     * With memory only, while {@code spec} is being published its resident parent stays (pinned): dropped, it would
     * leave the new record unreachable, a copy wasted. Released by {@link #resident} or {@link #publicationEnded}.
     * With a durable tier a parent is dropped from memory only once it is written, so the record stays reachable (and
     * a pin would hold back the parent's own write, which its children wait for).
     */
    private void holdParent(RecordSpec spec) {
        if (!durableTier && spec.parent() != null && memory.contains(spec.parent())) {
            memory.pin(spec.parent());
            parentsHeld.put(spec.key(), spec.parent());
        }
    }

    private void releaseParent(RecordKey key) {
        RecordKey parent = parentsHeld.remove(key);
        if (parent != null) {
            RecordIndex.Entry e = memory.get(parent);
            if (e != null && e.pins() > 0) {
                memory.unpin(parent);
            }
        }
    }

    /** The admitted publication of {@code key} ended without the record (abandoned, failed, oversize). */
    public void publicationEnded(RecordKey key) {
        inFlight.remove(key);
        releaseParent(key);
    }

    /**
     * The admitted publication of {@code spec} is copied into {@code slots}: the record is resident and dirty, and
     * its ancestors' last use is refreshed (without moving them in any recency order). When the record was held
     * without a row (memory only) it keeps its own pages and takes the row: the publication's page slots are
     * returned for the caller to free. Null otherwise.
     */
    public SlotList resident(RecordSpec spec, SlotList slots) {
        if (inFlight.remove(spec.key()) == null) {
            throw new IllegalStateException(spec.key() + " was not in flight");
        }
        releaseParent(spec.key());
        long now = clock.getAsLong();
        SlotList surplus = null;
        if (memory.contains(spec.key())) {
            surplus = memory.addRow(spec, slots, now);
        } else {
            memory.insert(spec, slots, disk.contains(spec.key()), now);
        }
        refreshAncestors(spec.parent(), now);
        return surplus;
    }

    /**
     * A record read back from disk for a restore, in {@code slots} (now the catalog's): it stays resident, clean
     * while its file lasts, and its file becomes the most recently used on disk at once (the restore's use, reported
     * when all its records are copied, comes later: a size lowered meanwhile would otherwise remove this file first,
     * making the record dirty again). False when the key is resident or in flight already; the caller frees the
     * slots.
     */
    public boolean adoptRestored(RecordSpec spec, SlotList slots) {
        RecordKey key = spec.key();
        if (memory.contains(key) || inFlight.containsKey(key)) {
            return false;
        }
        long now = clock.getAsLong();
        memory.insert(spec, slots, disk.contains(key), now);
        disk.touch(key, now);
        return true;
    }

    // ---- lookup and restore ----

    /**
     * The records of {@code chain} held in memory or on disk, root first, up to the first that is held nowhere or
     * does not hang from the record before it (the first from nothing: a chain with a key skipped or out of order
     * matches only as far as it is a chain, never serving a record at another record's position); unlike
     * {@link #match} it does not stop at the deepest record with a row (a pool may hold the rest).
     */
    public List<Located> present(String namespace, long[] chain) {
        List<Located> present = new ArrayList<>();
        RecordKey previous = null;
        for (long hash : chain) {
            RecordKey key = new RecordKey(namespace, hash);
            RecordIndex.Entry m = memory.get(key);
            RecordSpec spec = m != null ? m.spec() : null;
            Where where = Where.MEMORY;
            if (spec == null) {
                DiskIndex.Entry d = disk.peek(key);
                if (d == null) {
                    break;
                }
                spec = d.spec();
                where = Where.DISK;
            }
            if (!spec.follows(previous)) {
                break;
            }
            present.add(new Located(spec, where));
            previous = key;
        }
        return present;
    }

    /** The match of {@code chain} (keys root first) across tiers; memory wins where a record is in both. */
    public Match match(String namespace, long[] chain) {
        List<Located> present = present(namespace, chain);
        int depth = ChainMatch.depth(present.size(), i -> true, i -> present.get(i).spec().hasRow());
        if (depth > 0) {
            return new Match(List.copyOf(present.subList(0, depth)), "");
        }
        String why;
        if (chain.length == 0) {
            why = "the chain is empty";
        } else if (present.isEmpty()) {
            RecordKey first = new RecordKey(namespace, chain[0]);
            RecordIndex.Entry m = memory.get(first);
            DiskIndex.Entry d = m != null ? null : disk.peek(first);
            why = m == null && d == null ? "the chain's first record is not cached"
                    : "the chain's first record is not a root (a chain is matched from its root)";
        } else {
            why = present.size() + (present.size() == 1 ? " record" : " records")
                    + " of the chain cached, none carries a row";
        }
        return new Match(List.of(), why);
    }

    /**
     * A restore used the match ending at {@code deepest}: it becomes the hottest in memory, its ancestors' last use
     * is refreshed without moving them, and the records read from disk ({@code fromDisk}) become the hottest
     * there.
     */
    public void used(RecordKey deepest, List<RecordKey> fromDisk) {
        long now = clock.getAsLong();
        memory.touch(deepest, now, EvictionPolicy.Use.RESUMED);
        for (RecordKey k : fromDisk) {
            disk.touch(k, now);
        }
        RecordIndex.Entry m = memory.get(deepest);
        DiskIndex.Entry d = disk.peek(deepest);
        if (m != null || d != null) {
            refreshAncestors((m != null ? m.spec() : d.spec()).parent(), now);
        }
    }

    /** Pins resident {@code key} (a restore copies out of it); false when it is not resident. */
    public boolean pin(RecordKey key) {
        if (!memory.contains(key)) {
            return false;
        }
        memory.pin(key);
        return true;
    }

    /** Releases one pin of {@code key} taken by {@link #pin}; nothing when it is no longer resident. */
    public void unpin(RecordKey key) {
        if (memory.contains(key)) {
            memory.unpin(key);
        }
    }

    /**
     * Pins the durable copy of {@code key} (a restore reads its file): making room, lowering the capacity and the
     * max-age sweep leave that file and its ancestors' files in place until {@link #unpinFile}. False when the
     * record has no durable copy (nothing is pinned then).
     */
    public boolean pinFile(RecordKey key) {
        if (!disk.contains(key)) {
            return false;
        }
        filePins.merge(key, 1, Integer::sum);
        return true;
    }

    /** Releases one pin of {@code key} taken by {@link #pinFile}, whether or not the file is still there. */
    public void unpinFile(RecordKey key) {
        filePins.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
    }

    /** Read pins held on durable copies now (restores reading them; a file two restores read counts twice). */
    public int filePins() {
        return filePins.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** Durable copies at least one restore is reading now, each counted once (a file lost meanwhile not at all). */
    public int filesPinned() {
        return (int) filePins.keySet().stream().filter(disk::contains).count();
    }

    /** The slots of resident {@code key}, or null. */
    public SlotList slotsOf(RecordKey key) {
        RecordIndex.Entry e = memory.get(key);
        return e == null ? null : e.slots();
    }

    // ---- memory pressure ----

    /** Slots of droppable records: what on-demand eviction can free at once. */
    public long cleanSlots() {
        return memory.droppableSlots();
    }

    /**
     * Drops droppable records, the policy's choice first (the coldest under LRU), until at least {@code slots} slots
     * are freed, or nothing is left. With memory only, a record others hang from may lose just its row (listed in
     * {@code rowsDropped}; it stays resident, page-only).
     */
    public Removal evictClean(int slots) {
        Removal out = Removal.empty();
        long freed = 0;
        while (freed < slots) {
            RecordIndex.Dropped d = memory.dropNext();
            if (d == null) {
                break;
            }
            freed += d.freed().count();
            (d.whole() ? out.removed() : out.rowsDropped()).add(d.entry().key());
            out.slots().add(d.freed());
        }
        return out;
    }

    /**
     * The writes to start for a pressure of {@code targetSlots} (slots being written count toward it; {@code
     * Long.MAX_VALUE} drains everything): records that want a write first, then the coldest dirty ones, each
     * replaced by its root-most uncommitted ancestor. Each started record is pinned and its disk room reserved,
     * evicting the least recently used files when needed. Dirty chains that can never be written are dropped.
     */
    public SpillPlan planSpills(long targetSlots) {
        List<SpillStart> start = new ArrayList<>();
        Removal removal = Removal.empty();
        Removal orphans = Removal.empty();
        if (!durableTier || spillWindowFull(targetSlots)) {
            // Nothing more may start, so no candidates are gathered (a full spill window asks for a plan on every
            // event, and gathering costs a walk of the coldest).
            return new SpillPlan(start, removal, orphans);
        }
        List<RecordKey> candidates = wantWrite.active();
        for (RecordIndex.Entry e : memory.coldestParked(SPILL_CANDIDATES)) {
            if (!wantWrite.contains(e.key())) {
                candidates.add(e.key());
            }
        }
        // Candidates of one chain climb through the same ancestors: each climb is remembered for every record on its
        // path, so a plan costs a walk of the records it looks at, not of their chains once per candidate.
        Map<RecordKey, Climb> climbs = new HashMap<>();
        for (RecordKey key : candidates) {
            if (spillWindowFull(targetSlots)) {
                break;
            }
            RecordIndex.Entry e = memory.get(key);
            if (e == null || e.durable() || writing.containsKey(key)) {
                wantWrite.remove(key);
                continue;
            }
            Climb c = climb(e, climbs);
            RecordIndex.Entry next = c.top();
            if (c.orphan()) {
                wantWrite.remove(key);
                dropDirtySubtree(next.key(), orphans);
                climbs.clear(); // records left memory
                continue;
            }
            RecordKey blocker = c.blocked() ? c.blocker() : writing.containsKey(next.key()) ? next.key() : null;
            if (blocker != null && writing.containsKey(blocker)) {
                wantWrite.await(key, blocker);
                continue;
            }
            if (c.blocked() || next != e) {
                wantWrite.add(key); // blocked by a publication in flight, or its ancestor's write starts now
            }
            if (c.blocked()) {
                continue;
            }
            long fileBytes = RecordFileFormat.fileLength(layout, next.spec().hasRow());
            int filesRemoved = removal.files().size();
            boolean room = makeDiskRoom(next.spec(), fileBytes, removal);
            if (removal.files().size() != filesRemoved) {
                climbs.clear(); // files left the disk: a climb may now go further up
            }
            if (!room) {
                // No room for this one (the disk holds only files of records in memory, or writes in flight have
                // reserved the rest): it stays dirty for a later plan, and the candidates after it, which may be
                // smaller or find room, are still planned.
                continue;
            }
            wantWrite.remove(next.key());
            writing.put(next.key(), new Write(fileBytes, next.slots().count()));
            reservedBytes += fileBytes;
            writingSlots += next.slots().count();
            memory.pin(next.key());
            start.add(new SpillStart(next.spec(), next.slots()));
        }
        return new SpillPlan(start, removal, orphans);
    }

    /**
     * Where a spill climbs from a dirty record: its root-most dirty ancestor (written first, parents before children;
     * the record itself when its parent is durable or it is a root), or that a write or publication in flight above
     * ({@code blocker}) blocks it, or that an ancestor left memory (an orphan: {@code top} is the highest one still
     * resident).
     */
    private record Climb(RecordIndex.Entry top, boolean blocked, boolean orphan, RecordKey blocker) {
    }

    /**
     * The climb from dirty resident {@code e}, taken from {@code known} where a record on its path climbed before in
     * this plan, and remembered there for every record it passes. A write started since at the remembered top is
     * seen by the caller ({@code writing} holds the top).
     */
    private Climb climb(RecordIndex.Entry e, Map<RecordKey, Climb> known) {
        List<RecordKey> path = new ArrayList<>();
        RecordIndex.Entry next = e;
        Climb out;
        for (RecordKey up = e.spec().parent(); ; ) {
            path.add(next.key());
            if (up == null || disk.contains(up)) {
                out = new Climb(next, false, false, null);
                break;
            }
            if (writing.containsKey(up) || inFlight.containsKey(up)) {
                out = new Climb(null, true, false, up);
                break;
            }
            Climb above = known.get(up);
            if (above != null) {
                out = above;
                break;
            }
            RecordIndex.Entry a = memory.get(up);
            if (a == null) {
                out = new Climb(next, false, true, null);
                break;
            }
            next = a;
            up = a.spec().parent();
        }
        for (RecordKey k : path) {
            known.put(k, out);
        }
        return out;
    }

    /** Whether no more writes may start: as many as the cap in flight, or their slots already meet the pressure. */
    private boolean spillWindowFull(long targetSlots) {
        return writing.size() >= spillCap || writingSlots >= targetSlots;
    }

    /**
     * The write of {@code key} committed a file of {@code fileBytes}. Records that wait for it are planned by the
     * next {@link #planSpills}.
     */
    public Commit committed(RecordKey key, long fileBytes) {
        endWrite(key);
        RecordIndex.Entry e = memory.get(key);
        if (e == null) {
            return Commit.RECORD_GONE;
        }
        memory.unpin(key);
        RecordKey parent = e.spec().parent();
        if (parent != null && !disk.contains(parent)) {
            return Commit.PARENT_GONE;
        }
        disk.put(e.spec(), fileBytes, clock.getAsLong());
        memory.markDurable(key);
        return Commit.COMMITTED;
    }

    /**
     * The write of {@code key} failed for good (twice, or the disk is full): the record and its dirty descendants
     * are dropped, since none of them could ever be written under it.
     */
    public Removal writeFailed(RecordKey key) {
        endWrite(key);
        Removal out = Removal.empty();
        if (memory.contains(key)) {
            memory.unpin(key);
            dropDirtySubtree(key, out);
        }
        return out;
    }

    /**
     * The write of {@code key} found the disk full before the catalog's capacity was reached (the filesystem holds
     * less than the tier was given, or something else filled it): the capacity becomes what the disk held then
     * (the committed files and the other writes in flight), the coldest files go to make room for this record
     * once more, and the record is dirty again, to be planned anew. Returns the files removed.
     */
    public Removal diskFull(RecordKey key) {
        Write w = writing.get(key);
        long fileBytes = w == null ? 0 : w.fileBytes();
        endWrite(key);
        if (memory.contains(key)) {
            memory.unpin(key);
            wantWrite.add(key);
        }
        Removal out = limitDiskCapacity(disk.bytes() + reservedBytes);
        RecordIndex.Entry e = memory.get(key);
        if (e != null && fileBytes <= diskCapacityBytes) {
            makeDiskRoom(e.spec(), fileBytes, out);
        }
        return out;
    }

    /**
     * Lowers the disk tier's capacity to {@code bytes} (never raises it) and removes the least recently used files
     * (with their descendants') until the committed files and the writes in flight fit; a file a write in flight
     * hangs from, or that a restore is reading (with its ancestors'), stays, and the capacity stays above {@code bytes}
     * until {@link #settleCapacity}. Returns the files removed.
     */
    public Removal limitDiskCapacity(long bytes) {
        Removal out = Removal.empty();
        if (!durableTier || bytes >= diskCapacityBytes) {
            return out;
        }
        diskCapacityBytes = Math.max(bytes, reservedBytes);
        Set<RecordKey> keep = new HashSet<>();
        for (RecordKey w : writing.keySet()) {
            RecordIndex.Entry e = memory.get(w);
            keepChain(e == null ? null : e.spec().parent(), keep);
        }
        Map<RecordKey, Boolean> readInSubtree = new HashMap<>();
        for (DiskIndex.Entry coldest : disk.entries()) {
            if (disk.bytes() + reservedBytes <= diskCapacityBytes) {
                break;
            }
            if (!keep.contains(coldest.key()) && disk.contains(coldest.key())
                    && !disk.anyInSubtree(coldest.key(), filePins::containsKey, readInSubtree)) {
                removeFiles(coldest.key(), out);
            }
        }
        if (disk.bytes() + reservedBytes > diskCapacityBytes) {
            // only files that writes in flight hang from, or that restores are reading, are left
            diskCapacityBytes = disk.bytes() + reservedBytes;
        }
        pendingCapacity = diskCapacityBytes > bytes ? bytes : -1;
        return out;
    }

    /**
     * Lowers the capacity to what {@link #limitDiskCapacity} or {@link #setDurableCapacity} last asked for, where files
     * in use kept it above that then and are free now (call it when a restore's reads or a write end; it walks the
     * files only while a lower size is pending). Returns the files removed.
     */
    public Removal settleCapacity() {
        if (pendingCapacity < 0 || pendingCapacity >= diskCapacityBytes) {
            pendingCapacity = -1;
            return Removal.empty();
        }
        return limitDiskCapacity(pendingCapacity);
    }

    /**
     * Sets the durable tier's capacity to {@code bytes}, up or down (a pool whose managers came or went); going down
     * removes the least recently used records as {@link #limitDiskCapacity} does. Returns what was removed.
     */
    public Removal setDurableCapacity(long bytes) {
        if (!durableTier || bytes < 0) {
            throw new IllegalArgumentException("durable capacity " + bytes + " cannot be set"
                    + (durableTier ? "" : " without a durable tier"));
        }
        if (bytes >= diskCapacityBytes) {
            diskCapacityBytes = bytes;
            pendingCapacity = -1;
            return Removal.empty();
        }
        return limitDiskCapacity(bytes);
    }

    /** The disk tier's capacity now (lowered from the configured size when the disk held less). */
    public long diskCapacityBytes() {
        return diskCapacityBytes;
    }

    /** The write started for {@code key} never ran (its request was lost): the record is dirty again, unpinned. */
    public void writeNeverRan(RecordKey key) {
        endWrite(key);
        if (memory.contains(key)) {
            memory.unpin(key);
        }
    }

    private void endWrite(RecordKey key) {
        Write w = writing.remove(key);
        if (w == null) {
            throw new IllegalStateException(key + " was not being written");
        }
        reservedBytes -= w.fileBytes();
        writingSlots -= w.slots();
        wantWrite.writeEnded(key);
    }

    /** The file of {@code key} is gone or failed validation: it and its descendants' files leave the disk. */
    public Removal fileLost(RecordKey key) {
        Removal out = Removal.empty();
        if (disk.contains(key)) {
            removeFiles(key, out);
        }
        return out;
    }

    /** Dirty records in memory now (a scan: for the end of a drain). */
    public int dirtyRecords() {
        int n = 0;
        for (RecordIndex.Entry e : memory.entries()) {
            if (!e.durable()) {
                n++;
            }
        }
        return n;
    }

    /** Writes in flight now. */
    public int writesInFlight() {
        return writing.size();
    }

    /** Slots of the records being written. */
    public long writingSlots() {
        return writingSlots;
    }

    // ---- recovery, expiry, operators ----

    /**
     * Takes what a scan of the disk found: files the catalog did not know are added (resident copies become clean),
     * files it knew that are gone leave it (with their descendants'), files whose parent is in neither are returned
     * for deletion, and the oldest are evicted beyond the capacity, counting the room reserved for writes in flight.
     * A file of a record being written or published is left to that record's report. The node calls it once, at
     * start, on an empty catalog; on a live catalog it reconciles (a scan racing writes and deletes would mislead
     * it, which is why the node keeps its own view after a disk store restart).
     */
    public Removal recovered(List<Recovered> records) {
        long now = clock.getAsLong();
        Removal out = Removal.empty();
        Set<RecordKey> found = new HashSet<>();
        records.forEach(r -> found.add(r.spec().key()));
        for (DiskIndex.Entry known : disk.entries()) {
            if (!found.contains(known.key()) && disk.contains(known.key())) {
                removeFiles(known.key(), out);
            }
        }
        List<Recovered> pending = new ArrayList<>(records);
        pending.sort(Comparator.comparingLong(Recovered::ageNanos).reversed());
        boolean progress = true;
        while (progress) {
            progress = false;
            for (var it = pending.iterator(); it.hasNext(); ) {
                Recovered r = it.next();
                RecordKey key = r.spec().key();
                if (writing.containsKey(key) || inFlight.containsKey(key) || disk.contains(key)) {
                    it.remove();
                    continue;
                }
                RecordKey parent = r.spec().parent();
                if (parent != null && !disk.contains(parent)) {
                    continue; // added once its parent is, or deleted below if it never is
                }
                disk.put(r.spec(), r.fileBytes(), now - r.ageNanos());
                if (memory.contains(key)) {
                    memory.markDurable(key);
                }
                it.remove();
                progress = true;
            }
        }
        // A file's age is its own: a child used after its parent's file was last touched must not leave the
        // parent looking older than the child.
        for (DiskIndex.Entry d : disk.entries()) {
            refreshAncestorsUpTo(d.spec().parent(), d.lastUseNanos());
        }
        for (Recovered orphan : pending) {
            if (!out.files().contains(orphan.spec().key())) {
                out.files().add(orphan.spec().key()); // its parent's file is gone: never kept without it
            }
        }
        while (disk.bytes() + reservedBytes > diskCapacityBytes && disk.coldest() != null) {
            removeFiles(disk.coldest().key(), out);
        }
        return out;
    }

    /**
     * One max-age sweep: leaves (records with no child in memory, on disk or in flight) unused for longer than
     * {@code maxAgeNanos} leave every tier, oldest first, up to the first fresh leaf and at most
     * {@link ExpirySweep#MAX_RECORDS_PER_SWEEP} per sweep; a parent whose last child goes is a leaf from then on.
     * Busy leaves (pinned, being written, their file being read) wait for the next sweep.
     */
    public Removal expire(long maxAgeNanos) {
        List<RecordKey> inFlightParents = new ArrayList<>(inFlight.size());
        inFlight.values().forEach(spec -> inFlightParents.add(spec.parent()));
        List<RecordKey> keys = ExpirySweep.plan(sweepCandidates(), inFlightParents, clock.getAsLong(), maxAgeNanos,
                ExpirySweep.MAX_RECORDS_PER_SWEEP);
        Removal out = Removal.empty();
        keys.forEach(k -> removeEverywhere(k, out));
        return out;
    }

    /** Removes {@code key} and its descendants from every tier (an operator's eviction). */
    public Eviction evict(RecordKey key) {
        if (!memory.contains(key) && !disk.contains(key)) {
            return new Eviction(inFlight.containsKey(key) ? EvictResult.BUSY : EvictResult.NOT_FOUND,
                    Removal.empty());
        }
        ExpirySweep.Subtrees tree = new ExpirySweep.Subtrees(sweepCandidates());
        List<RecordKey> subtree = tree.deepestFirst(key);
        if (tree.anyBusy(subtree)) {
            return new Eviction(EvictResult.BUSY, Removal.empty());
        }
        Removal out = Removal.empty();
        subtree.forEach(k -> removeEverywhere(k, out));
        return new Eviction(EvictResult.EVICTED, out);
    }

    // ---- views ----

    /** The state of {@code key}, or null when the catalog knows nothing of it. */
    public State state(RecordKey key) {
        RecordIndex.Entry m = memory.get(key);
        if (m != null) { // resident: a row being published for it changes nothing until it lands
            return writing.containsKey(key) ? State.BEING_WRITTEN : m.durable() ? State.CLEAN : State.DIRTY;
        }
        if (inFlight.containsKey(key)) {
            return State.IN_FLIGHT;
        }
        return disk.contains(key) ? State.DURABLE_ONLY : null;
    }

    /** What is known of {@code key}, or null. */
    public Info info(RecordKey key) {
        State state = state(key);
        if (state == null) {
            return null;
        }
        long now = clock.getAsLong();
        if (state == State.IN_FLIGHT) {
            return new Info(inFlight.get(key), state, Where.MEMORY, 0, 0, false, 0);
        }
        RecordIndex.Entry m = memory.get(key);
        DiskIndex.Entry d = disk.peek(key);
        long lastUse = Math.max(m == null ? Long.MIN_VALUE : m.lastUseNanos(),
                d == null ? Long.MIN_VALUE : d.lastUseNanos());
        return new Info(m != null ? m.spec() : d.spec(), state, m != null ? Where.MEMORY : Where.DISK,
                m == null ? 0 : m.slots().count(), m == null ? 0 : m.pins(), d != null, Math.max(0, now - lastUse));
    }

    /**
     * The records of {@code namespace} (null: all) held in {@code where} (null: any tier), ordered by namespace then
     * key.
     */
    public List<Info> list(String namespace, Where where) {
        Set<RecordKey> keys = new HashSet<>();
        if (where == null || where == Where.MEMORY) {
            memory.entries().forEach(e -> keys.add(e.key()));
        }
        if (where == null || where == Where.DISK) {
            disk.entries().forEach(e -> keys.add(e.key()));
        }
        List<RecordKey> sorted = new ArrayList<>();
        for (RecordKey k : keys) {
            if (namespace == null || namespace.equals(k.namespace())) {
                sorted.add(k);
            }
        }
        sorted.sort(KEY_ORDER);
        List<Info> out = new ArrayList<>(sorted.size());
        sorted.forEach(k -> out.add(info(k)));
        return out;
    }

    /** {@code key} and its chain, or null when the catalog knows nothing of it. */
    public Description describe(RecordKey key) {
        Info record = info(key);
        if (record == null) {
            return null;
        }
        ArrayDeque<Info> chain = new ArrayDeque<>();
        Info cur = record;
        boolean complete = false;
        while (cur != null && chain.size() <= memory.size() + disk.size() + 1) {
            chain.addFirst(cur);
            RecordKey parent = cur.spec().parent();
            if (parent == null) {
                complete = true;
                break;
            }
            cur = info(parent);
        }
        boolean present = chain.stream().noneMatch(i -> i.state() == State.IN_FLIGHT);
        return new Description(record, List.copyOf(chain), complete && present);
    }

    /** Records resident in memory now. */
    public int residentRecords() {
        return memory.size();
    }

    /** Publications in flight now. */
    public int inFlightRecords() {
        return inFlight.size();
    }

    /** Records of the durable tier now. */
    public int durableRecords() {
        return disk.size();
    }

    /** Bytes of the durable tier's records now. */
    public long durableBytes() {
        return disk.bytes();
    }

    /** Rows the memory's policy has decided so far to hold back for their conversation's next turn. */
    public long rowsHeldBack() {
        return memory.policy().rowsHeldBack();
    }

    /** The catalog's figures. */
    public Stats stats() {
        return new Stats(memory.size(), memory.residentSlots(), memory.droppableSlots(),
                durableTier ? memory.parkedSlots() : memory.residentSlots() - memory.droppableSlots(),
                inFlight.size(), disk.size(), disk.bytes(), writing.size(), writingSlots);
    }

    /**
     * Checks every invariant: the memory view's own (lists, slot totals, child counts); clean exactly when a file
     * is committed; no durable child whose parent is not durable; no record in two states; writes pinned and
     * reserved; records waiting for a write wait for one in flight. An {@link IllegalStateException} names the first
     * broken one.
     */
    public void checkInvariants() {
        memory.checkInvariants();
        long reserved = 0;
        long slotsWritten = 0;
        for (RecordIndex.Entry e : memory.entries()) {
            if (e.durable() != disk.contains(e.key())) {
                throw new IllegalStateException(e.key() + " is " + (e.durable() ? "clean without a file"
                        : "dirty though its file is committed"));
            }
            RecordSpec publishing = inFlight.get(e.key());
            if (publishing != null && (durableTier || e.spec().hasRow() || !publishing.hasRow())) {
                throw new IllegalStateException(e.key() + " is both resident and in flight");
            }
            if (writing.containsKey(e.key())) {
                if (e.pins() < 1) {
                    throw new IllegalStateException(e.key() + " is being written but not pinned");
                }
                slotsWritten += e.slots().count();
            }
        }
        for (DiskIndex.Entry d : disk.entries()) {
            RecordKey parent = d.spec().parent();
            if (parent != null && !disk.contains(parent)) {
                throw new IllegalStateException(d.key() + " is on disk without its parent " + parent);
            }
            if (inFlight.containsKey(d.key())) {
                throw new IllegalStateException(d.key() + " is both on disk and in flight");
            }
            if (writing.containsKey(d.key())) {
                throw new IllegalStateException(d.key() + " is being written though its file is committed");
            }
        }
        for (Write w : writing.values()) {
            reserved += w.fileBytes();
        }
        if (reserved != reservedBytes) {
            throw new IllegalStateException("reserved disk bytes " + reservedBytes + " != " + reserved);
        }
        if (slotsWritten != writingSlots) {
            throw new IllegalStateException("slots being written " + writingSlots + " != " + slotsWritten);
        }
        wantWrite.checkInvariants(writing::containsKey);
        for (Map.Entry<RecordKey, RecordKey> w : wantWrite.waiting().entrySet()) {
            RecordIndex.Entry e = memory.get(w.getKey());
            if (e == null || e.durable()) {
                throw new IllegalStateException(w.getKey() + " waits for a write though it is "
                        + (e == null ? "not resident" : "clean"));
            }
            RecordKey up = e.spec().parent();
            while (up != null && !up.equals(w.getValue())) {
                RecordIndex.Entry a = memory.get(up);
                up = a == null ? null : a.spec().parent();
            }
            if (up == null) {
                throw new IllegalStateException(w.getKey() + " waits for the write of " + w.getValue()
                        + ", which is not one of its ancestors");
            }
        }
        if (durableTier && disk.bytes() + reservedBytes > diskCapacityBytes) {
            throw new IllegalStateException("disk holds " + disk.bytes() + " + " + reservedBytes
                    + " reserved bytes, more than its capacity " + diskCapacityBytes);
        }
    }

    // ---- internals ----

    /**
     * Makes room on disk for {@code fileBytes} more, deleting the least recently used files (with their
     * descendants' files); the chain being written is made the most recent first, so it never goes for its own
     * room. False, deleting nothing, when the files that may go would not make the room.
     */
    private boolean makeDiskRoom(RecordSpec spec, long fileBytes, Removal out) {
        if (fileBytes > diskCapacityBytes) {
            return false;
        }
        long now = clock.getAsLong();
        Set<RecordKey> keep = new HashSet<>();
        keepChain(spec.parent(), keep);
        for (RecordKey w : writing.keySet()) {
            RecordIndex.Entry e = memory.get(w);
            keepChain(e == null ? null : e.spec().parent(), keep);
        }
        for (RecordKey k : keep) {
            disk.touch(k, now);
        }
        if (disk.bytes() + reservedBytes + fileBytes <= diskCapacityBytes) {
            return true;
        }
        // Only files of records that are no longer in memory go for room: deleting the file of a resident record
        // would make it dirty again, to be written back, and free no memory. Resident clean records leave memory
        // first when room is needed there (keeping the intake free), and their files are candidates from then on.
        // A file a restore is reading stays too (its read would find it gone). Whether a record or a descendant
        // whose file goes with it is resident in memory or being read, each subtree walked once: deleting files
        // whose subtrees hold no such record leaves every other answer as it was.
        // The files that may go are counted first, and go only when together they make the room: otherwise they
        // would leave the disk for nothing.
        Map<RecordKey, Boolean> busyInChain = new HashMap<>();
        long needed = disk.bytes() + reservedBytes + fileBytes - diskCapacityBytes;
        long freed = 0;
        Set<RecordKey> counted = new HashSet<>();
        List<RecordKey> victims = new ArrayList<>();
        for (DiskIndex.Entry coldest : disk.entries()) {
            if (freed >= needed) {
                break;
            }
            if (!keep.contains(coldest.key()) && !counted.contains(coldest.key()) && !disk.anyInSubtree(coldest.key(),
                    k -> memory.contains(k) || filePins.containsKey(k), busyInChain)) {
                freed += disk.subtreeBytes(coldest.key(), counted);
                victims.add(coldest.key());
            }
        }
        if (freed < needed) {
            return false;
        }
        for (RecordKey victim : victims) {
            if (disk.contains(victim)) {
                removeFiles(victim, out);
            }
        }
        return disk.bytes() + reservedBytes + fileBytes <= diskCapacityBytes;
    }

    /** Adds {@code key} and its ancestors that are on disk to {@code keep}: a write in flight hangs from them. */
    private void keepChain(RecordKey key, Set<RecordKey> keep) {
        for (RecordKey up = key; up != null; ) {
            DiskIndex.Entry d = disk.peek(up);
            if (d == null || !keep.add(up)) {
                break;
            }
            up = d.spec().parent();
        }
    }

    /** Removes {@code key}'s file and its descendants' files; resident ones become dirty again. */
    private void removeFiles(RecordKey key, Removal out) {
        for (DiskIndex.Entry d : disk.removeWithDescendants(key)) {
            out.files().add(d.key());
            if (out.removed().isEmpty() || !out.removed().getLast().equals(d.key())) {
                out.removed().add(d.key());
            }
            if (memory.contains(d.key())) {
                memory.markParked(d.key());
            }
        }
    }

    /**
     * Refreshes the last use of {@code up} and every ancestor above it, in memory and on disk, to {@code nowNanos}
     * without moving any of them in a recency order, up to the first ancestor held in neither.
     */
    private void refreshAncestors(RecordKey up, long nowNanos) {
        for (int guard = memory.size() + disk.size(); up != null && guard >= 0; guard--) {
            RecordIndex.Entry m = memory.get(up);
            DiskIndex.Entry d = disk.peek(up);
            if (m == null && d == null) {
                return;
            }
            memory.refresh(up, nowNanos);
            disk.refresh(up, nowNanos);
            up = (m != null ? m.spec() : d.spec()).parent();
        }
    }

    /**
     * As {@link #refreshAncestors}, stopping at the first ancestor already used at {@code nowNanos} or later (the
     * ones above it were refreshed with it, or will be): for recovery, where every record is walked.
     */
    private void refreshAncestorsUpTo(RecordKey up, long nowNanos) {
        while (up != null) {
            DiskIndex.Entry d = disk.peek(up);
            if (d == null || d.lastUseNanos() >= nowNanos) {
                return;
            }
            disk.refresh(up, nowNanos);
            memory.refresh(up, nowNanos);
            up = d.spec().parent();
        }
    }

    /** Removes {@code key} from memory and disk (its descendants must be gone already or go with the files). */
    private void removeEverywhere(RecordKey key, Removal out) {
        RecordIndex.Entry e = memory.remove(key);
        if (e != null) {
            out.slots().add(e.slots());
            out.removed().add(key);
        }
        if (disk.contains(key)) {
            removeFiles(key, out);
        }
        wantWrite.remove(key);
    }

    /** Drops dirty {@code key} and its dirty descendants from memory, except pinned ones (a copy reads them). */
    private void dropDirtySubtree(RecordKey key, Removal out) {
        List<RecordIndex.Entry> doomed = new ArrayList<>(memory.residentDescendants(key));
        RecordIndex.Entry root = memory.get(key);
        if (root != null) {
            doomed.addFirst(root);
        }
        for (int i = doomed.size() - 1; i >= 0; i--) {
            RecordIndex.Entry d = doomed.get(i);
            if (d.durable() || d.pins() > 0 || writing.containsKey(d.key())) {
                continue;
            }
            memory.remove(d.key());
            wantWrite.remove(d.key());
            out.slots().add(d.slots());
            out.removed().add(d.key());
        }
    }

    private List<ExpirySweep.Candidate> sweepCandidates() {
        Map<RecordKey, ExpirySweep.Candidate> out = new HashMap<>();
        for (RecordIndex.Entry e : memory.entries()) {
            // busy: pinned, being written, or held without its row while the row is being published
            out.put(e.key(), new ExpirySweep.Candidate(e.key(), e.spec().parent(), e.lastUseNanos(),
                    e.pins() > 0 || writing.containsKey(e.key()) || inFlight.containsKey(e.key())));
        }
        for (DiskIndex.Entry d : disk.entries()) {
            ExpirySweep.Candidate m = out.get(d.key());
            long lastUse = m == null ? d.lastUseNanos() : Math.max(m.lastUseNanos(), d.lastUseNanos());
            boolean busy = m != null && m.busy() || filePins.containsKey(d.key());
            out.put(d.key(), new ExpirySweep.Candidate(d.key(), d.spec().parent(), lastUse, busy));
        }
        return new ArrayList<>(out.values());
    }
}
