package dev.selene.engine.invariants;

import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotList;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * A test fixture that drives a slot pool and a resident index together the way the memory tier and the slot
 * pool do: a record's slots are allocated before it is inserted and released after it leaves, and every change
 * of the index's droppable total is passed on to the pool's clean count.
 */
public final class IndexedPool {

    private final Layout layout;
    private final SlotAccounting pool;
    private final RecordIndex index;

    public IndexedPool(Layout layout, SlotAccounting pool, RecordIndex index) {
        this.layout = layout;
        this.pool = pool;
        this.index = index;
    }

    public SlotAccounting pool() {
        return pool;
    }

    public RecordIndex index() {
        return index;
    }

    /** Allocates the record's slots (for a publication) and makes it resident. */
    public RecordIndex.Entry publish(RecordSpec spec, boolean durable, long nowNanos) {
        SlotList slots = pool.allocate(spec.slots(layout));
        return syncClean(() -> index.insert(spec, slots, durable, nowNanos));
    }

    /** Removes the record and releases its slots; null when it was not resident. */
    public RecordIndex.Entry remove(RecordKey key) {
        RecordIndex.Entry e = syncClean(() -> index.remove(key));
        if (e != null) {
            pool.release(e.slots());
        }
        return e;
    }

    /** Drops the coldest droppable record and releases its slots; null when none is droppable. */
    public RecordIndex.Entry dropColdest() {
        RecordIndex.Entry e = syncClean(index::dropColdest);
        if (e != null) {
            pool.release(e.slots());
        }
        return e;
    }

    /** Evicts coldest droppable records until {@code slots} slots of them are gone; returns the slots freed. */
    public int evict(int slots) {
        int freed = 0;
        while (freed < slots) {
            RecordIndex.Entry e = dropColdest();
            if (e == null) {
                break;
            }
            freed += e.slots().count();
        }
        return freed;
    }

    public void pin(RecordKey key) {
        syncClean(() -> {
            index.pin(key);
            return null;
        });
    }

    public void unpin(RecordKey key) {
        syncClean(() -> {
            index.unpin(key);
            return null;
        });
    }

    public void markDurable(RecordKey key) {
        syncClean(() -> {
            index.markDurable(key);
            return null;
        });
    }

    /** Removes every resident record, releasing its slots. */
    public void removeAll() {
        List<RecordKey> keys = new ArrayList<>();
        index.entries().forEach(e -> keys.add(e.key()));
        for (RecordKey key : keys) {
            remove(key);
        }
    }

    private <T> T syncClean(Supplier<T> change) {
        long before = index.droppableSlots();
        T result = change.get();
        long delta = index.droppableSlots() - before;
        if (delta > 0) {
            pool.addClean((int) delta);
        } else if (delta < 0) {
            pool.removeClean((int) -delta);
        }
        return result;
    }
}
