package dev.selene.actors.value;

import dev.selene.engine.key.RecordKey;

/**
 * One record as the admin API lists it.
 *
 * @param key          the record
 * @param parent       its parent, or null for a root
 * @param hasRow       whether it can end a match
 * @param tier         where it lives
 * @param state        {@code dirty} (memory only), {@code being_written}, {@code clean} (in memory and with a
 *                     durable copy), {@code durable_only} (a durable copy only) or {@code pinned}
 * @param slots        host slots it holds (0 outside memory)
 * @param bytes        payload bytes
 * @param idleMillis   time since its last use
 * @param durableCopy  the tier that holds a durable copy of it: the disk (a committed file) or, on a node whose only
 *                     durable tier is the pool, the pool (retired to it); null when there is none
 */
public record RecordView(RecordKey key, RecordKey parent, boolean hasRow, Tier tier, String state, int slots,
                         long bytes, long idleMillis, Tier durableCopy) {

    /** Whether a durable copy of it exists (a committed file, or a copy retired to the pool). */
    public boolean durable() {
        return durableCopy != null;
    }

    /** Whether a committed file of it exists on this node's disk. */
    public boolean onDisk() {
        return durableCopy == Tier.DISK;
    }
}
