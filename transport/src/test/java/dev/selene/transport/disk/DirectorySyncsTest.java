package dev.selene.transport.disk;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Group commit of directory fsyncs on a real directory: callers that arrive while an fsync runs share the next one,
 * none returns on an fsync that began before it was called, and a failed fsync covers nobody. The first fsync is
 * held (a stall injected into the real file system calls) so that the others are known to arrive during it.
 */
class DirectorySyncsTest {

    private ScratchDirectory scratch;
    private ExecutorService callers;

    @BeforeEach
    void setUp() throws IOException {
        scratch = ScratchDirectory.create("dirsync");
        callers = Executors.newFixedThreadPool(8);
    }

    @AfterEach
    void tearDown() throws Exception {
        callers.shutdownNow();
        callers.awaitTermination(10, TimeUnit.SECONDS);
        scratch.close();
    }

    @Test
    void callersArrivingDuringAStalledFsync_shareTheNextOne_andNoneReturnsEarly() throws Exception {
        StallingOps ops = new StallingOps(false);
        DirectorySyncs syncs = new DirectorySyncs(ops);
        Path dir = scratch.path();
        Future<?> leader = callers.submit(() -> sync(syncs, dir));
        assertTrue(ops.firstStarted.await(10, TimeUnit.SECONDS), "the first fsync never started");
        List<Future<?>> followers = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            followers.add(callers.submit(() -> sync(syncs, dir)));
        }
        awaitWaiting(ops, syncs, 7);
        assertFalse(followers.stream().anyMatch(Future::isDone),
                "a caller returned on an fsync that began before it was called");
        ops.release.countDown();
        leader.get(10, TimeUnit.SECONDS);
        for (Future<?> f : followers) {
            f.get(10, TimeUnit.SECONDS);
        }
        assertEquals(2, ops.calls.get(), "eight callers: the stalled fsync and one shared by the seven others");
    }

    @Test
    void aFailedFsync_injected_failsItsCaller_andTheOthersRunTheirOwn() throws Exception {
        StallingOps ops = new StallingOps(true);
        DirectorySyncs syncs = new DirectorySyncs(ops);
        Path dir = scratch.path();
        Future<?> leader = callers.submit(() -> sync(syncs, dir));
        assertTrue(ops.firstStarted.await(10, TimeUnit.SECONDS), "the first fsync never started");
        List<Future<?>> followers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            followers.add(callers.submit(() -> sync(syncs, dir)));
        }
        awaitWaiting(ops, syncs, 3);
        ops.release.countDown();
        Exception e = assertThrows(Exception.class, () -> leader.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IOException && e.getCause().getMessage().contains("injected"),
                "the leader's failure is the fsync's: " + e.getCause());
        for (Future<?> f : followers) {
            f.get(10, TimeUnit.SECONDS);
        }
        assertEquals(2, ops.calls.get(), "the failed fsync, then one shared by the three others");
    }

    /** Polls (bounded: 10 s) until {@code n} callers wait behind the running fsync. */
    private static void awaitWaiting(StallingOps ops, DirectorySyncs syncs, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ops.waiting(syncs) != n) {
            assertTrue(System.nanoTime() < deadline, "expected " + n + " callers waiting, saw " + ops.waiting(syncs));
            Thread.sleep(5);
        }
    }

    private static Void sync(DirectorySyncs syncs, Path dir) throws IOException {
        syncs.sync(dir);
        return null;
    }

    /** The real directory fsync, the first one held until released (and failing then, when asked). */
    private static final class StallingOps implements FileOps {
        final CountDownLatch firstStarted = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger calls = new AtomicInteger();
        private final boolean failFirst;
        private final AtomicInteger entered = new AtomicInteger();

        StallingOps(boolean failFirst) {
            this.failFirst = failFirst;
        }

        /** Callers of {@code syncs} blocked behind the running fsync (threads parked in its monitor's wait). */
        int waiting(DirectorySyncs syncs) {
            int n = 0;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                StackTraceElement[] stack = t.getStackTrace();
                if (t.getState() == Thread.State.WAITING && stack.length > 1
                        && stack[0].getClassName().equals(Object.class.getName())) {
                    for (StackTraceElement e : stack) {
                        if (e.getClassName().startsWith(DirectorySyncs.class.getName())) {
                            n++;
                            break;
                        }
                    }
                }
            }
            return n;
        }

        @Override
        public void syncDirectory(Path dir) throws IOException {
            calls.incrementAndGet();
            if (entered.getAndIncrement() == 0) {
                firstStarted.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
                if (failFirst) {
                    throw new IOException("injected fsync failure");
                }
            }
            NativeFileOps.INSTANCE.syncDirectory(dir);
        }

        @Override
        public OpenFile create(Path file) {
            throw new UnsupportedOperationException();
        }

        @Override
        public OpenFile openForRead(Path file) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void preallocate(OpenFile file, long length) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void setLength(OpenFile file, long length) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long write(OpenFile file, List<MemorySegment> buffers, long offset) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long read(OpenFile file, List<MemorySegment> buffers, long offset) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void sync(OpenFile file) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close(OpenFile file) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void rename(Path from, Path to) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean delete(Path file) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long size(Path file) {
            throw new UnsupportedOperationException();
        }
    }
}
