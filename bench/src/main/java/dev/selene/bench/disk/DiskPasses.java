package dev.selene.bench.disk;

import dev.selene.transport.disk.NativeIo;
import dev.selene.transport.disk.RecordIo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Timed passes over a {@link BenchRecords} set: Selene's record files through a {@link RecordIo}, and the raw
 * O_DIRECT baseline of the same body bytes (one file per record, preallocated, written in 1 MiB pwrites from the same
 * host memory, fsynced; read back with 1 MiB preads). Each pass runs its records on {@code threads} threads, each
 * thread taking the next record, and is timed from the first start to the last completion.
 */
public final class DiskPasses {

    /** Bytes of one raw pwrite or pread: DirectRecordIo's default run. */
    public static final int RAW_CHUNK_BYTES = 1 << 20;

    private DiskPasses() {
    }

    /** Something done to one record. */
    @FunctionalInterface
    public interface RecordTask {
        void run(int record) throws IOException;
    }

    /** Runs {@code task} for records {@code 0 .. count - 1} on {@code threads} threads; returns the elapsed nanos. */
    public static long timed(ExecutorService pool, int threads, int count, RecordTask task) throws Exception {
        AtomicInteger next = new AtomicInteger();
        Runnable worker = () -> {
            for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
                try {
                    task.run(i);
                } catch (IOException e) {
                    throw new UncheckedIOException("record " + i + ": " + e.getMessage(), e);
                }
            }
        };
        long start = System.nanoTime();
        Future<?>[] running = new Future<?>[threads];
        for (int t = 0; t < threads; t++) {
            running[t] = pool.submit(worker);
        }
        for (Future<?> f : running) {
            f.get();
        }
        return System.nanoTime() - start;
    }

    /** A pool of daemon threads named {@code name-N}. */
    public static ExecutorService pool(String name, int threads) {
        AtomicInteger n = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(r, name + "-" + n.getAndIncrement());
            t.setDaemon(true);
            return t;
        };
        return Executors.newFixedThreadPool(threads, factory);
    }

    /** Selene: commits record {@code i} to {@code dir} (temporary, fallocate, body, footer, fsync, rename). */
    public static RecordTask seleneWrite(RecordIo io, BenchRecords records, Path dir) {
        return i -> io.write(records.spec(i), records.layout(), records.shares(i), dir);
    }

    /** Selene: reads record {@code i} back from {@code dir} into its slots, checking every checksum. */
    public static RecordTask seleneRead(RecordIo io, BenchRecords records, Path dir) {
        return i -> io.read(io.fileOf(dir, records.spec(i).key()), records.layout(), records.shares(i));
    }

    /** Raw: the body of record {@code i}, O_DIRECT into a preallocated file, then fsync. */
    public static RecordTask rawWrite(BenchRecords records, Path dir) {
        return i -> {
            Path file = rawFile(dir, i);
            MemorySegment body = records.body(i);
            int fd = NativeIo.openDirectForWrite(file);
            try {
                NativeIo.fallocate(fd, body.byteSize(), file);
                for (long at = 0; at < body.byteSize(); ) {
                    at += NativeIo.pwrite(fd, body.asSlice(at, Math.min(RAW_CHUNK_BYTES, body.byteSize() - at)), at,
                            file);
                }
                NativeIo.fsync(fd, file);
            } finally {
                NativeIo.close(fd, file);
            }
        };
    }

    /** Raw: the body of record {@code i}, O_DIRECT preads back into its slots. */
    public static RecordTask rawRead(BenchRecords records, Path dir) {
        return i -> {
            Path file = rawFile(dir, i);
            MemorySegment body = records.body(i);
            int fd = NativeIo.openDirectForRead(file);
            try {
                for (long at = 0; at < body.byteSize(); ) {
                    long n = NativeIo.pread(fd, body.asSlice(at, Math.min(RAW_CHUNK_BYTES, body.byteSize() - at)),
                            at, file);
                    if (n <= 0) {
                        throw new IOException(file + " ended at " + at);
                    }
                    at += n;
                }
            } finally {
                NativeIo.close(fd, file);
            }
        };
    }

    /** {@code io} plus a CRC32C over the record's body on the same thread: before a write, after a read. */
    public static RecordTask checksummed(BenchRecords records, RecordTask io, boolean before) {
        return i -> {
            if (before) {
                crc32c(records.body(i));
            }
            io.run(i);
            if (!before) {
                crc32c(records.body(i));
            }
        };
    }

    private static long crc32c(MemorySegment bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes.asByteBuffer());
        return crc.getValue();
    }

    /** The first three fields of /proc/loadavg, or "?" where there is none. */
    public static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return fields[0] + " " + fields[1] + " " + fields[2];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    private static Path rawFile(Path dir, int i) {
        return dir.resolve("raw-" + i + ".bin");
    }

    /**
     * Creates {@code dir} (empty) for O_DIRECT files; fails with a clear message on tmpfs, where O_DIRECT is
     * refused, and without native I/O.
     */
    public static Path freshDirectory(Path dir) throws IOException {
        if (!NativeIo.isAvailable()) {
            throw new IllegalStateException("native O_DIRECT I/O is unavailable here: "
                    + NativeIo.unavailabilityCause());
        }
        deleteTree(dir);
        Files.createDirectories(dir);
        FileStore store = Files.getFileStore(dir);
        if (store.type().toLowerCase(Locale.ROOT).contains("tmpfs")) {
            throw new IllegalArgumentException(dir + " is on tmpfs (" + store + "), which has no O_DIRECT; give a "
                    + "directory on the disk to measure, e.g. under bench/target");
        }
        return dir;
    }

    /** Describes the filesystem that holds {@code dir}, for reports. */
    public static String describeStore(Path dir) throws IOException {
        FileStore store = Files.getFileStore(dir);
        return store.type() + " (" + store.name() + ", " + store.getUsableSpace() / (1L << 30) + " GiB free)";
    }

    /** Deletes {@code dir} and everything under it, if it exists. */
    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** Gigabytes (10^9 bytes) per second. */
    public static double gbps(long bytes, long nanos) {
        return nanos <= 0 ? Double.NaN : (double) bytes / nanos;
    }
}
