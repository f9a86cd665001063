package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link RecordIo} test double that is the real {@link DirectRecordIo} over file system calls into which a test
 * injects faults: EIO or ENOSPC on a write, a failed or unsupported preallocation, a failed fsync, a stalled write
 * or read, and a crash between the last write and the rename. Faults are one-shot unless said otherwise; with none
 * armed it behaves exactly like the real thing (and passes the same contract). It can also observe, without changing
 * anything: the temporary file's length and allocated bytes as its first write begins.
 */
public final class FaultInjectingRecordIo implements RecordIo {

    /**
     * The process "dies" here: thrown as an {@link Error} so that the writer cleans nothing up; logged as one line,
     * without a stack trace (the test, not the code, threw it).
     */
    public static final class SimulatedCrash extends Error {
        SimulatedCrash(String message) {
            super(message, null, false, false);
        }
    }

    /** A write or read held until the test releases it. */
    public static final class Stall {
        private final CountDownLatch started = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private final Duration limit;

        private Stall(Duration limit) {
            this.limit = limit;
        }

        /** Waits until a write (or read) has run into the stall; false if none did within {@code timeout}. */
        public boolean awaitStarted(Duration timeout) throws InterruptedException {
            return started.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        /** Lets the stalled write (or read) continue. */
        public void release() {
            released.countDown();
        }

        /** Holds the calling {@code what} (a write, a read) until released or the limit passes. */
        private void hold(String what) throws IOException {
            started.countDown();
            try {
                if (!released.await(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                    released.countDown();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("stalled " + what + " interrupted", e);
            }
        }
    }

    private final Faults faults = new Faults();
    private final AtomicReference<Stall> readStall = new AtomicReference<>();
    private final DirectRecordIo delegate;

    /** Transfers fan out on {@code executor}; runs are kept small so that even a tiny record has several. */
    public FaultInjectingRecordIo(Executor executor, int transfersPerRecord) {
        this.delegate = DirectRecordIo.withFileOps(faults, executor, transfersPerRecord, 2 * 4096);
    }

    /** The {@code writesFirst + 1}-th body or footer write from now fails with {@code errno} (EIO, ENOSPC, ...). */
    public void failWrite(int errno, int writesFirst) {
        faults.writeErrno.set(errno);
        faults.writesBeforeFailure.set(writesFirst);
    }

    /** The next preallocation fails with {@code errno}; EOPNOTSUPP makes the writer fall back. */
    public void failPreallocation(int errno) {
        faults.preallocateErrno.set(errno);
    }

    /** Every preallocation from now on fails with {@code errno}: a disk that stays full (ENOSPC). */
    public void failEveryPreallocation(int errno) {
        faults.everyPreallocateErrno.set(errno);
    }

    /** The next fsync of a file fails with {@code errno}. */
    public void failSync(int errno) {
        faults.syncErrno.set(errno);
    }

    /** The next fsync of a directory fails with {@code errno}. */
    public void failDirectorySync(int errno) {
        faults.directorySyncErrno.set(errno);
    }

    /** The next write blocks until released, or until {@code limit} passes (a disk that takes 30 s). */
    public Stall stallNextWrite(Duration limit) {
        Stall stall = new Stall(limit);
        faults.stall.set(stall);
        return stall;
    }

    /** The next read of a record blocks before it opens the file until released, or until {@code limit} passes. */
    public Stall stallNextRead(Duration limit) {
        Stall stall = new Stall(limit);
        readStall.set(stall);
        return stall;
    }

    /** The next record is written, synced and closed, then the process dies before renaming it. */
    public void crashBeforeRename() {
        faults.crashBeforeRename.set(true);
    }

    /** What a file was on disk as its first write began: its length and the bytes the file system allocated. */
    public record FirstWrite(long length, long allocatedBytes) {
    }

    /** From now on, notes each file's length and allocation as its first write begins (see {@link #firstWrite}). */
    public void observeFirstWrites() {
        faults.observeFirstWrites.set(true);
    }

    /** What the file at {@code file} was as its first write began; null if none was observed. */
    public FirstWrite firstWrite(Path file) {
        return faults.firstWrites.get(file.toAbsolutePath().normalize());
    }

    /** Write calls made so far (body runs and footers). */
    public int writeCalls() {
        return faults.writeCalls.get();
    }

    @Override
    public WriteResult write(RecordSpec spec, Layout layout, ShareMemory source, Path dir) throws IOException {
        return delegate.write(spec, layout, source, dir);
    }

    @Override
    public RecordHeader read(Path file, Layout layout, ShareMemory target) throws IOException {
        Stall s = readStall.getAndSet(null);
        if (s != null) {
            s.hold("read");
        }
        return delegate.read(file, layout, target);
    }

    @Override
    public RecordHeader readHeader(Path file) throws IOException {
        return delegate.readHeader(file);
    }

    @Override
    public RecordHeader verify(Path file, Layout layout) throws IOException {
        return delegate.verify(file, layout);
    }

    @Override
    public boolean delete(Path file) throws IOException {
        return delegate.delete(file);
    }

    /** The real calls, with the armed faults in front of them. */
    private static final class Faults implements FileOps {
        private final FileOps real = NativeFileOps.INSTANCE;
        final AtomicInteger writeErrno = new AtomicInteger();
        final AtomicInteger writesBeforeFailure = new AtomicInteger();
        final AtomicInteger preallocateErrno = new AtomicInteger();
        final AtomicInteger everyPreallocateErrno = new AtomicInteger();
        final AtomicInteger syncErrno = new AtomicInteger();
        final AtomicInteger directorySyncErrno = new AtomicInteger();
        final AtomicReference<Stall> stall = new AtomicReference<>();
        final AtomicBoolean crashBeforeRename = new AtomicBoolean();
        final AtomicInteger writeCalls = new AtomicInteger();
        final AtomicBoolean observeFirstWrites = new AtomicBoolean();
        final Map<Path, FirstWrite> firstWrites = new ConcurrentHashMap<>();

        @Override
        public OpenFile create(Path file) throws IOException {
            return real.create(file);
        }

        @Override
        public OpenFile openForRead(Path file) throws IOException {
            return real.openForRead(file);
        }

        @Override
        public void preallocate(OpenFile file, long length) throws IOException {
            fail(preallocateErrno, "fallocate of " + length + " bytes for", file.path());
            int always = everyPreallocateErrno.get();
            if (always != 0) {
                throw new NativeIoException("fallocate of " + length + " bytes for", file.path(), always);
            }
            real.preallocate(file, length);
        }

        @Override
        public void setLength(OpenFile file, long length) throws IOException {
            real.setLength(file, length);
        }

        @Override
        public long write(OpenFile file, List<MemorySegment> buffers, long offset) throws IOException {
            writeCalls.incrementAndGet();
            if (observeFirstWrites.get()) {
                // computeIfAbsent holds the file's other writers until the observation is made.
                firstWrites.computeIfAbsent(file.path().toAbsolutePath().normalize(), Faults::observe);
            }
            Stall s = stall.getAndSet(null);
            if (s != null) {
                s.hold("write");
            }
            if (writeErrno.get() != 0 && writesBeforeFailure.getAndDecrement() == 0) {
                fail(writeErrno, "pwritev at offset " + offset + " to", file.path());
            }
            return real.write(file, buffers, offset);
        }

        @Override
        public long read(OpenFile file, List<MemorySegment> buffers, long offset) throws IOException {
            return real.read(file, buffers, offset);
        }

        @Override
        public void sync(OpenFile file) throws IOException {
            fail(syncErrno, "fsync of", file.path());
            real.sync(file);
        }

        @Override
        public void close(OpenFile file) throws IOException {
            real.close(file);
        }

        @Override
        public void rename(Path from, Path to) throws IOException {
            if (crashBeforeRename.getAndSet(false)) {
                throw new SimulatedCrash("simulated crash between writing " + from + " and renaming it");
            }
            real.rename(from, to);
        }

        @Override
        public void syncDirectory(Path dir) throws IOException {
            fail(directorySyncErrno, "fsync of directory", dir);
            real.syncDirectory(dir);
        }

        @Override
        public boolean delete(Path file) throws IOException {
            return real.delete(file);
        }

        @Override
        public long size(Path file) throws IOException {
            return real.size(file);
        }

        /** The file's length, and its allocated blocks as stat(1) reports them (st_blocks times their unit). */
        private static FirstWrite observe(Path file) {
            try {
                Process stat = new ProcessBuilder("stat", "--format=%s %b %B", file.toString())
                        .redirectErrorStream(true).start();
                String out = new String(stat.getInputStream().readAllBytes()).trim();
                if (stat.waitFor() != 0) {
                    throw new IllegalStateException("stat " + file + " failed: " + out);
                }
                String[] f = out.split(" ");
                return new FirstWrite(Long.parseLong(f[0]), Long.parseLong(f[1]) * Long.parseLong(f[2]));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        private static void fail(AtomicInteger armed, String operation, Path file) throws NativeIoException {
            int errno = armed.getAndSet(0);
            if (errno != 0) {
                throw new NativeIoException(operation, file, errno);
            }
        }
    }
}
