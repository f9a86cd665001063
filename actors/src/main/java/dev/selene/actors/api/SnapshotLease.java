package dev.selene.actors.api;

import java.time.Duration;

/**
 * The caller's hold on a publication's GPU snapshot: while it is alive the publisher keeps retrying; once the
 * caller must free the snapshot, the publication is abandoned.
 */
@FunctionalInterface
public interface SnapshotLease {

    /** Whether the snapshot is still held. */
    boolean alive();

    /**
     * How much longer the snapshot is held for sure: the node may keep a publication waiting for slots that long.
     * Zero (the default) when the lease has no known end; then the caller's loop retries instead.
     */
    default Duration remaining() {
        return Duration.ZERO;
    }

    /** A lease that lives until {@code deadlineNanos} on the {@link System#nanoTime()} clock. */
    static SnapshotLease until(long deadlineNanos) {
        return new SnapshotLease() {
            @Override
            public boolean alive() {
                return System.nanoTime() - deadlineNanos < 0;
            }

            @Override
            public Duration remaining() {
                return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
            }
        };
    }
}
