package dev.selene.actors.value;

import dev.selene.engine.key.RecordKey;

/**
 * One record as the admin API lists it.
 *
 * @param key          the record
 * @param parent       its parent, or null for a root
 * @param hasRow       whether it can end a match
 * @param tier         where it lives
 * @param state        {@code dirty} (memory only), {@code being_written}, {@code clean} (in memory and on
 *                     disk), {@code durable_only} (on disk only) or {@code pinned}
 * @param slots        host slots it holds (0 outside memory)
 * @param bytes        payload bytes
 * @param idleMillis   time since its last use
 * @param onDisk       whether a committed file of it exists
 */
public record RecordView(RecordKey key, RecordKey parent, boolean hasRow, Tier tier, String state, int slots,
                         long bytes, long idleMillis, boolean onDisk) {
}
