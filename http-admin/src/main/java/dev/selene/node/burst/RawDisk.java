package dev.selene.node.burst;

import dev.selene.transport.disk.NativeIo;

import java.io.IOException;
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
final class RawDisk {

    /** Bytes of one O_DIRECT transfer. */
    static final int TRANSFER_BYTES = 1 << 20;

    record Result(double writeGbps, double readGbps) {
    }

    private RawDisk() {
    }

    static Result measure(Path dir, long totalBytes, long fileBytes, int threads) throws InterruptedException {
        long files = Math.max(threads, totalBytes / fileBytes);
        long fileLength = (fileBytes + 4095) / 4096 * 4096;
        try (Arena arena = Arena.ofShared(); ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            Files.createDirectories(dir);
            MemorySegment[] buffers = new MemorySegment[threads];
            for (int t = 0; t < threads; t++) {
                buffers[t] = arena.allocate(TRANSFER_BYTES, 4096);
                buffers[t].fill((byte) (t + 1));
            }
            double write = run(pool, threads, files, fileLength, buffers, dir, true);
            double read = run(pool, threads, files, fileLength, buffers, dir, false);
            return new Result(write, read);
        } catch (IOException e) {
            throw new IllegalStateException("raw disk baseline failed in " + dir + ": " + e.getMessage(), e);
        } finally {
            try (var list = Files.list(dir)) {
                for (Path p : list.toList()) {
                    Files.deleteIfExists(p);
                }
                Files.deleteIfExists(dir);
            } catch (IOException ignored) {
                // best effort: the directory is inside the burst's own data folder
            }
        }
    }

    private static double run(ExecutorService pool, int threads, long files, long fileLength, MemorySegment[] buffers,
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
                throw new IllegalStateException("raw disk baseline: " + e.getCause().getMessage(), e.getCause());
            }
        }
        return files * fileLength / (double) (System.nanoTime() - start);
    }
}
