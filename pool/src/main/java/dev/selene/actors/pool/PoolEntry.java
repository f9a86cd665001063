package dev.selene.actors.pool;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;

/**
 * A record as the pool knows it: its key, its parent's key (null for a root), whether it carries a row, and the
 * bytes of its image (the record file format, sent and stored chunk by chunk).
 */
public record PoolEntry(RecordKey key, RecordKey parent, boolean hasRow, long imageBytes) implements PoolMessage {

    /** The entry of {@code spec} whose image has {@code imageBytes} bytes. */
    public static PoolEntry of(RecordSpec spec, long imageBytes) {
        return new PoolEntry(spec.key(), spec.parent(), spec.hasRow(), imageBytes);
    }

    /** The record's spec. */
    public RecordSpec spec() {
        return new RecordSpec(key, parent, hasRow);
    }
}
