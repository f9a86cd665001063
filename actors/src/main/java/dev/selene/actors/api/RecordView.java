package dev.selene.actors.api;

import dev.selene.engine.key.RecordKey;

/**
 * One record as the admin API lists it.
 *
 * @param key          the record
 * @param parent       its parent, or null for a root
 * @param hasRow       whether it can end a match
 * @param tier         where it lives
 * @param state        {@code parked} (memory only), {@code clean} (durable elsewhere) or {@code pinned}
 * @param slots        host slots it holds (0 outside memory)
 * @param bytes        payload bytes
 * @param idleMillis   time since its last use
 */
public record RecordView(RecordKey key, RecordKey parent, boolean hasRow, Tier tier, String state, int slots,
                         long bytes, long idleMillis) {
}
