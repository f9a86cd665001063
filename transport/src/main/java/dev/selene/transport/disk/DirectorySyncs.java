package dev.selene.transport.disk;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Group commit of directory entries: writers that renamed into the same directory at about the same time share one
 * directory fsync instead of one each, without weakening what a returned call promises.
 *
 * <pre>
 * Per directory: requested (tickets handed out), synced (highest ticket a finished fsync covers), a leader flag.
 *   sync(dir):  my = ++requested                      (after the caller's rename: the rename is in my ticket)
 *               wait while a leader runs and synced &lt; my
 *               synced &gt;= my             → return     (an fsync that started after my rename finished)
 *               else become leader: upTo = requested; fsync(dir); synced = upTo; wake everyone
 * </pre>
 *
 * A call returns only after an fsync that began after the call did: every rename made before the call is durable.
 * A failed fsync fails its leader's call and covers nobody: each call it would have covered runs an fsync of its own
 * (and fails or succeeds with it), exactly as if there were no grouping. Calls for different directories never
 * wait for each other.
 */
final class DirectorySyncs {

    private final FileOps ops;
    private final ConcurrentHashMap<Path, Group> groups = new ConcurrentHashMap<>();

    DirectorySyncs(FileOps ops) {
        this.ops = Objects.requireNonNull(ops, "ops");
    }

    /** Makes every entry change in {@code dir} made before this call durable, sharing the fsync with others. */
    void sync(Path dir) throws IOException {
        groups.computeIfAbsent(dir, d -> new Group()).sync(dir);
    }

    /** The tickets of one directory; all fields guarded by the group's monitor. */
    private final class Group {
        private long requested;
        private long synced;
        private boolean leading;

        void sync(Path dir) throws IOException {
            long upTo;
            synchronized (this) {
                long mine = ++requested;
                while (leading && synced < mine) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IOException("interrupted while waiting for the directory fsync of " + dir, e);
                    }
                }
                if (synced >= mine) {
                    return;
                }
                leading = true;
                upTo = requested;
            }
            boolean done = false;
            try {
                ops.syncDirectory(dir);
                done = true;
            } finally {
                synchronized (this) {
                    if (done) {
                        synced = Math.max(synced, upTo);
                    }
                    leading = false;
                    notifyAll();
                }
            }
        }
    }
}
