package dev.selene.node.burst;

import dev.selene.transport.disk.NativeIo;
import dev.selene.transport.gpu.KeyedContent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The raw disk path under the disk tier, measured in the same run: files of the record file size, preallocated
 * with fallocate and written with O_DIRECT from 4096-aligned buffers, then fsynced, by as many threads as the
 * spill scheduler keeps writes in flight; then read back with O_DIRECT. No header, no checksum, no rename.
 */
public final class RawDisk {

    /** Bytes of one O_DIRECT transfer. */
    static final int TRANSFER_BYTES = 1 << 20;

    /** Share of the filesystem's free space the baseline may take at most. */
    static final double FREE_SPACE_SHARE = 0.5;

    /** What one measurement moved: {@code bytes} written in {@code writeNanos}, then read back in {@code readNanos}. */
    record Result(long bytes, long writeNanos, long readNanos) {

        static final Result NONE = new Result(0, 0, 0);

        double writeGbps() {
            return writeNanos > 0 ? bytes / (double) writeNanos : 0;
        }

        double readGbps() {
            return readNanos > 0 ? bytes / (double) readNanos : 0;
        }

        /** Both measurements as one: their bytes over their times. */
        Result plus(Result other) {
            return new Result(bytes + other.bytes, writeNanos + other.writeNanos, readNanos + other.readNanos);
        }
    }

    /** The baseline could not run or failed part way; the message is one line for the report. */
    static final class BaselineException extends Exception {
        BaselineException(String message) {
            super(message);
        }
    }

    private RawDisk() {
    }

    /**
     * The baseline's scratch directory for a tier in {@code tierDir}: a sibling on the same filesystem
     * ({@code <tier>.raw-baseline}), so that it never mixes with the tier's files and a run killed during it leaves
     * nothing inside the tier.
     */
    public static Path beside(Path tierDir) {
        Path abs = tierDir.toAbsolutePath().normalize();
        return abs.resolveSibling(abs.getFileName() + ".raw-baseline");
    }

    /** Deletes the scratch directory a killed run may have left beside {@code tierDir}. */
    public static void removeLeftover(Path tierDir) {
        deleteQuietly(beside(tierDir));
    }

    /**
     * Writes then reads about {@code totalBytes} in files of {@code fileBytes} under {@code dir} (created, and
     * deleted afterwards), taking at most {@link #FREE_SPACE_SHARE} of the free space there.
     */
    static Result measure(Path dir, long totalBytes, long fileBytes, int threads) throws InterruptedException,
            BaselineException {
        return measure(dir, totalBytes, fileBytes, threads, threads);
    }

    /** As {@link #measure(Path, long, long, int)}, with {@code readThreads} readers instead of as many as writers. */
    static Result measure(Path dir, long totalBytes, long fileBytes, int threads, int readThreads)
            throws InterruptedException,
            BaselineException {
        long fileLength = (fileBytes + 4095) / 4096 * 4096;
        long free;
        try {
            Path parent = dir.toAbsolutePath().getParent();
            free = Files.getFileStore(parent).getUsableSpace();
        } catch (IOException e) {
            throw new BaselineException("not run: cannot read the free space beside the tier (" + e.getMessage()
                    + ")");
        }
        long allowed = (long) (free * FREE_SPACE_SHARE);
        if (allowed < threads * fileLength) {
            throw new BaselineException(String.format(java.util.Locale.ROOT,
                    "not run: %,d bytes free beside the tier, it needs %,d", free, 2 * threads * fileLength));
        }
        long files = Math.max(threads, Math.min(totalBytes, allowed) / fileLength);
        int most = Math.max(threads, readThreads);
        try (Arena arena = Arena.ofShared(); ExecutorService pool = Executors.newFixedThreadPool(most)) {
            Files.createDirectories(dir);
            MemorySegment[] buffers = new MemorySegment[most];
            for (int t = 0; t < most; t++) {
                buffers[t] = arena.allocate(TRANSFER_BYTES, 4096);
                KeyedContent.fill(buffers[t], 0x5e1e7eL + t); // incompressible, as record contents are
            }
            long write = run(pool, threads, files, fileLength, buffers, dir, true);
            long read = run(pool, readThreads, files, fileLength, buffers, dir, false);
            return new Result(files * fileLength, write, read);
        } catch (IOException | UncheckedIOException e) {
            throw new BaselineException("failed in " + dir + ": " + e.getMessage());
        } finally {
            deleteQuietly(dir);
        }
    }

    private static void deleteQuietly(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (var list = Files.list(dir)) {
            for (Path p : list.toList()) {
                Files.deleteIfExists(p);
            }
            Files.deleteIfExists(dir);
        } catch (IOException ignored) {
            // best effort: the directory is the baseline's own scratch space beside the tier
        }
    }

    /** Writes or reads every file; returns the nanoseconds it took. */
    private static long run(ExecutorService pool, int threads, long files, long fileLength, MemorySegment[] buffers,
                              Path dir, boolean write) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        long start = System.nanoTime();
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            MemorySegment buffer = buffers[t];
            fs.add(pool.submit(() -> {
                int f;
                while ((f = next.getAndIncrement()) < files) {
                    Path file = dir.resolve("raw-" + f + ".bin");
                    int fd = write ? NativeIo.openDirectForWrite(file) : NativeIo.openDirectForRead(file);
                    try {
                        if (write) {
                            NativeIo.fallocate(fd, fileLength, file);
                        }
                        for (long off = 0; off < fileLength; off += TRANSFER_BYTES) {
                            MemorySegment chunk = buffer.asSlice(0, Math.min(TRANSFER_BYTES, fileLength - off));
                            if (write) {
                                NativeIo.pwrite(fd, chunk, off, file);
                            } else {
                                NativeIo.pread(fd, chunk, off, file);
                            }
                        }
                        if (write) {
                            NativeIo.fsync(fd, file);
                        }
                    } finally {
                        NativeIo.close(fd, file);
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            try {
                f.get();
            } catch (java.util.concurrent.ExecutionException e) {
                throw new UncheckedIOException(new IOException(e.getCause().getMessage(), e.getCause()));
            }
        }
        return System.nanoTime() - start;
    }
}
