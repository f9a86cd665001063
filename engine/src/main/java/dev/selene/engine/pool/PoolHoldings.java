package dev.selene.engine.pool;

import dev.selene.engine.expiry.ExpirySweep;
import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotList;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * What a pool manager holds: the records in its slots, the slots reserved for uploads in progress, their recency
 * and their age. The manager's store actor owns one and does the I/O; this class decides which slots, which record
 * leaves for room and which ones expire.
 *
 * <p>Confined to the one actor that owns it; no locks inside. Every time is read from one injected clock.
 *
 * <h2>Design</h2>
 * <pre>
 * The parts are the host's: the slots are a {@link SlotAccounting} (a free stack with a bit per slot, so a slot
 * released twice is caught at once), the records a {@link RecordIndex} in which every held record is clean (the
 * manager's copy is the pool's copy: dropping it loses nothing this manager could still write elsewhere), so an
 * unpinned record is droppable, least recently used first, one recency order for every namespace (they compete
 * for room on recency alone).
 *
 * A record being sent (served, or copied to another manager) is pinned: it neither leaves for room nor expires.
 * A record dropped while pinned is doomed: no new transfer starts from it, and it leaves when its last pin goes.
 *
 * Max age follows the host's rule, per namespace: a sweep takes stale leaves only (a record with a child held
 * here is not a leaf), oldest first, at most {@link ExpirySweep#MAX_RECORDS_PER_SWEEP} per namespace, stopping at
 * the first fresh leaf. A use (a serve, an upload of a record already held) refreshes the last use of the
 * record's ancestors held here, and so does the upload of a child, without moving them in the recency order.
 * A manager holds only its share of a chain (placement is per record): an ancestor held here whose descendants
 * are uploaded or served on other managers is refreshed by its owner when it is told so ({@link #refreshAge}).
 * </pre>
 *
 * @param <T> what the owner keeps with each held record (its image's header and footer, say)
 */
public final class PoolHoldings<T> {

    /** Slots found for an upload, and the records that left to make the room. */
    public record Room(SlotList slots, List<RecordKey> evicted) {
    }

    private final SlotAccounting slots;
    private final RecordIndex index = new RecordIndex(false);
    private final Map<RecordKey, T> values = new HashMap<>();
    private final Map<RecordKey, Long> imageBytes = new HashMap<>();
    private final Map<RecordKey, SlotList> reserved = new HashMap<>();
    /** The parents of the uploads in progress that have one. */
    private final Map<RecordKey, RecordKey> reservedParents = new HashMap<>();
    private final Set<RecordKey> doomed = new HashSet<>();
    private final LongSupplier clock;
    private long bytes;

    /** Holdings over {@code totalSlots} slots, reading times from {@code clock} (nanoseconds). */
    public PoolHoldings(int totalSlots, LongSupplier clock) {
        this.slots = new SlotAccounting(totalSlots, 0);
        this.clock = clock;
    }

    // ---- uploads ----

    /**
     * Reserves {@code need} slots for an upload of {@code spec}, dropping the least recently used unpinned records
     * when the free slots are short; null (and nothing dropped) when even that would not make the room, or an
     * upload of its key is in progress already. Until the upload lands or fails, its parent is no leaf to the
     * max-age sweep.
     */
    public Room reserve(RecordSpec spec, int need) {
        RecordKey key = spec.key();
        if (reserved.containsKey(key) || need > slots.total()) {
            return null;
        }
        if (slots.free() + index.droppableSlots() < need) {
            return null;
        }
        List<RecordKey> evicted = new ArrayList<>();
        while (slots.free() < need) {
            RecordIndex.Entry victim = index.dropColdest();
            release(victim);
            evicted.add(victim.key());
        }
        SlotList s = slots.allocate(need);
        reserved.put(key, s);
        if (spec.parent() != null) {
            reservedParents.put(key, spec.parent());
        }
        return new Room(s, evicted);
    }

    /** The slots reserved for the upload of {@code key}, or null. */
    public SlotList reservedFor(RecordKey key) {
        return reserved.get(key);
    }

    /** The upload of {@code key} failed: its reserved slots are free again. */
    public void unreserve(RecordKey key) {
        reservedParents.remove(key);
        SlotList s = reserved.remove(key);
        if (s != null) {
            slots.release(s);
        }
    }

    /**
     * The upload of {@code spec} landed whole in its reserved slots: the record is held, the most recent of all,
     * and the last use of its ancestors held here is refreshed (their place in the recency order is kept).
     */
    public void hold(RecordSpec spec, long recordImageBytes, T value) {
        SlotList s = reserved.remove(spec.key());
        if (s == null) {
            throw new IllegalStateException(spec.key() + " has no slots reserved");
        }
        reservedParents.remove(spec.key());
        long now = clock.getAsLong();
        index.insert(spec, s, true, now);
        values.put(spec.key(), value);
        imageBytes.put(spec.key(), recordImageBytes);
        bytes += recordImageBytes;
        for (RecordKey up = spec.parent(); up != null; ) {
            RecordIndex.Entry a = index.get(up);
            if (a == null) {
                break;
            }
            index.refresh(up, now);
            up = a.spec().parent();
        }
    }

    // ---- held records ----

    /** Whether {@code key} is held and not doomed: a transfer may start from it. */
    public boolean holds(RecordKey key) {
        return index.contains(key) && !doomed.contains(key);
    }

    /** Whether {@code key} is held but doomed (it leaves when its last transfer ends). */
    public boolean isDoomed(RecordKey key) {
        return doomed.contains(key);
    }

    /** What the owner keeps with held {@code key}, or null. */
    public T value(RecordKey key) {
        return values.get(key);
    }

    /** The slots of held {@code key}, or null. */
    public SlotList slotsOf(RecordKey key) {
        RecordIndex.Entry e = index.get(key);
        return e == null ? null : e.slots();
    }

    /**
     * A use of held {@code key}: it becomes the most recent, and its ancestors held here are refreshed without
     * moving.
     */
    public void use(RecordKey key) {
        index.touch(key, clock.getAsLong(), EvictionPolicy.Use.RESUMED);
    }

    /**
     * Refreshes the last use of held {@code key} without moving it in the recency order, as the upload of a child
     * here would: a record below it was uploaded or served elsewhere. False when it is not held.
     */
    public boolean refreshAge(RecordKey key) {
        if (!index.contains(key)) {
            return false;
        }
        index.refresh(key, clock.getAsLong());
        return true;
    }

    /** Pins held {@code key} while a transfer reads its slots; pins nest. */
    public void pin(RecordKey key) {
        index.pin(key);
    }

    /** Releases one pin of {@code key}; true when it was doomed and has now left (its slots are free). */
    public boolean unpin(RecordKey key) {
        if (!index.contains(key)) {
            return false;
        }
        index.unpin(key);
        if (doomed.contains(key) && index.get(key).pins() == 0) {
            doomed.remove(key);
            release(index.remove(key));
            return true;
        }
        return false;
    }

    /**
     * Drops held {@code key}: at once when no transfer reads it (true), else it is doomed and leaves with its last
     * pin (false). False when it is not held.
     */
    public boolean drop(RecordKey key) {
        RecordIndex.Entry e = index.get(key);
        if (e == null) {
            return false;
        }
        if (e.pins() > 0) {
            doomed.add(key);
            return false;
        }
        release(index.remove(key));
        return true;
    }

    /**
     * One max-age sweep, namespace by namespace: stale leaves leave, oldest first, at most
     * {@link ExpirySweep#MAX_RECORDS_PER_SWEEP} per namespace, up to the first fresh leaf; pinned ones wait, and a
     * record whose child is being uploaded here is no leaf.
     * Returns the keys that left, namespace after namespace, each in removal order.
     */
    public List<RecordKey> expire(long maxAgeNanos) {
        Map<String, List<ExpirySweep.Candidate>> byNamespace = new TreeMap<>();
        for (RecordIndex.Entry e : index.entries()) {
            byNamespace.computeIfAbsent(e.key().namespace(), n -> new ArrayList<>()).add(new ExpirySweep.Candidate(
                    e.key(), e.spec().parent(), e.lastUseNanos(), e.pins() > 0));
        }
        long now = clock.getAsLong();
        List<RecordKey> out = new ArrayList<>();
        for (List<ExpirySweep.Candidate> records : byNamespace.values()) {
            for (RecordKey k : ExpirySweep.plan(records, reservedParents.values(), now, maxAgeNanos,
                    ExpirySweep.MAX_RECORDS_PER_SWEEP)) {
                release(index.remove(k));
                out.add(k);
            }
        }
        return out;
    }

    /** Calls {@code action} with every held record that is not doomed and what the owner keeps with it. */
    public void forEach(BiConsumer<RecordSpec, T> action) {
        for (RecordIndex.Entry e : index.entries()) {
            if (!doomed.contains(e.key())) {
                action.accept(e.spec(), values.get(e.key()));
            }
        }
    }

    /** The last use of held {@code key} on the clock, for tests and listings; throws when it is not held. */
    public long lastUseNanos(RecordKey key) {
        RecordIndex.Entry e = index.get(key);
        if (e == null) {
            throw new IllegalStateException(key + " is not held");
        }
        return e.lastUseNanos();
    }

    // ---- figures ----

    /** Records held (doomed ones included, until they leave). */
    public int size() {
        return index.size();
    }

    /** Image bytes of the records held. */
    public long bytes() {
        return bytes;
    }

    /** Slots of the records held (doomed ones still pinned by a transfer included); reserved slots are not. */
    public long heldSlots() {
        return index.residentSlots();
    }

    public int totalSlots() {
        return slots.total();
    }

    public int freeSlots() {
        return slots.free();
    }

    /** Uploads in progress (slots reserved). */
    public int reservations() {
        return reserved.size();
    }

    /**
     * Checks that the slots balance (free + held + reserved = total), that every held or reserved slot belongs to
     * exactly one record, that the recency index agrees with the held set (its own lists, slot totals and child
     * counts), that doomed records are held and pinned, and that the byte total is the sum of the held images. An
     * {@link IllegalStateException} names the first broken one.
     */
    public void checkInvariants() {
        slots.checkInvariants();
        index.checkInvariants();
        boolean[] owned = new boolean[slots.total()];
        long heldSlots = 0;
        long heldBytes = 0;
        int heldCount = 0;
        for (RecordIndex.Entry e : index.entries()) {
            heldSlots += own(owned, slots, e.key(), e.slots());
            Long b = imageBytes.get(e.key());
            if (b == null || !values.containsKey(e.key())) {
                throw new IllegalStateException(e.key() + " is in the recency index but not held");
            }
            heldBytes += b;
            heldCount++;
            if (reserved.containsKey(e.key())) {
                throw new IllegalStateException(e.key() + " is both held and being uploaded");
            }
        }
        for (RecordKey child : reservedParents.keySet()) {
            if (!reserved.containsKey(child)) {
                throw new IllegalStateException(child + " keeps a parent for an upload that is not in progress");
            }
        }
        long reservedSlots = 0;
        for (Map.Entry<RecordKey, SlotList> r : reserved.entrySet()) {
            reservedSlots += own(owned, slots, r.getKey(), r.getValue());
        }
        if (slots.free() + heldSlots + reservedSlots != slots.total()) {
            throw new IllegalStateException("slots free " + slots.free() + " + held " + heldSlots + " + reserved "
                    + reservedSlots + " != total " + slots.total());
        }
        if (heldCount != values.size() || heldCount != imageBytes.size()) {
            throw new IllegalStateException("held records disagree: recency index " + heldCount + ", values "
                    + values.size() + ", sizes " + imageBytes.size());
        }
        if (heldBytes != bytes) {
            throw new IllegalStateException("held bytes " + bytes + " != sum of held images " + heldBytes);
        }
        if (index.residentSlots() != heldSlots) {
            throw new IllegalStateException("recency index counts " + index.residentSlots() + " slots, records hold "
                    + heldSlots);
        }
        for (RecordKey d : doomed) {
            RecordIndex.Entry e = index.get(d);
            if (e == null || e.pins() == 0) {
                throw new IllegalStateException(d + " is doomed but " + (e == null ? "not held" : "not pinned"));
            }
        }
    }

    private static int own(boolean[] owned, SlotAccounting slots, RecordKey key, SlotList s) {
        for (int i = 0; i < s.count(); i++) {
            int slot = s.slot(i);
            if (!slots.isInUse(slot) || owned[slot]) {
                throw new IllegalStateException("slot " + slot + " of " + key + " is "
                        + (slots.isInUse(slot) ? "owned twice" : "free or out of range"));
            }
            owned[slot] = true;
        }
        return s.count();
    }

    private void release(RecordIndex.Entry e) {
        slots.release(e.slots());
        values.remove(e.key());
        Long b = imageBytes.remove(e.key());
        bytes -= b == null ? 0 : b;
        doomed.remove(e.key());
    }
}
