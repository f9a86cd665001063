package dev.selene.actors.api;

/**
 * The caller's hold on a publication's GPU snapshot: while it is alive the publisher keeps retrying; once the
 * caller must free the snapshot, the publication is abandoned.
 */
@FunctionalInterface
public interface SnapshotLease {

    /** Whether the snapshot is still held. */
    boolean alive();

    /** A lease that lives until {@code deadlineNanos} on the {@link System#nanoTime()} clock. */
    static SnapshotLease until(long deadlineNanos) {
        return () -> System.nanoTime() - deadlineNanos < 0;
    }
}
