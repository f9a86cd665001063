package dev.selene.bench.peer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.selene.bench.disk.BenchRecords;
import dev.selene.bench.disk.DiskPasses;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.DirectRecordIo;
import dev.selene.transport.disk.NativeIo;
import dev.selene.transport.disk.RecordIo;
import org.ehcache.Cache;
import org.ehcache.PersistentCacheManager;
import org.ehcache.config.builders.CacheConfigurationBuilder;
import org.ehcache.config.builders.CacheManagerBuilder;
import org.ehcache.config.builders.ResourcePoolsBuilder;
import org.ehcache.config.units.EntryUnit;
import org.ehcache.config.units.MemoryUnit;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The peer comparison: the byte volume of {@code DiskWriteReadBench} put through Ehcache 3 with heap,
 * off-heap and persistent disk tiers, beside Selene's {@link DirectRecordIo} on the same records, in one run.
 *
 * <p>Values are {@code byte[]} of one DeepSeek-TP4 record's body (7.75 MiB by default), keys {@code long}s, put and
 * got by {@code T} threads. Tiers are sized as Selene's would be: a small heap (2 entries), an off-heap tier of the
 * warm size, and a disk tier either smaller than the volume (to show what eviction does) or larger. For each
 * configuration the bench reports
 * <ul>
 *   <li>put GB/s (Ehcache returns before anything is durable), and put + close + {@code sync} GB/s: the bytes
 *       durable on the device, which is what Selene's writes return with;</li>
 *   <li>get GB/s in the same session (the disk tier's file is still in the page cache), and after a restart
 *       whose files were evicted from the page cache first ({@code posix_fadvise(DONTNEED)}), so that reads come
 *       from the device as Selene's O_DIRECT reads do;</li>
 *   <li>entries lost without an error: puts that returned normally whose key a later get finds missing.</li>
 * </ul>
 * Every value got is checked for its key's stamp at both ends.
 *
 * <p>Usage: {@code EhcachePeerBench [--mib 1024] [--layout deepseek-tp4] [--threads 4] [--offheap-mib 256]
 * [--small-disk-mib 512] [--large-disk-mib 0 (1.5 × volume)] [--dir target/ehcache-bench]
 * [--json target/ehcache-peer.json]}
 */
public final class EhcachePeerBench {

    private static final int POSIX_FADV_DONTNEED = 4;

    private final Layout layout;
    private final long volumeBytes;
    private final int threads;
    private final long offheapMiB;
    private final long smallDiskMiB;
    private final long largeDiskMiB;
    private final Path dir;
    private final List<Map<String, Object>> rows = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private int count;
    private long valueBytes;
    private String loadBefore;
    private String loadAfter;

    private EhcachePeerBench(Layout layout, long volumeBytes, int threads, long offheapMiB, long smallDiskMiB,
                             long largeDiskMiB, Path dir) {
        this.layout = layout;
        this.volumeBytes = volumeBytes;
        this.threads = threads;
        this.offheapMiB = offheapMiB;
        this.smallDiskMiB = smallDiskMiB;
        this.largeDiskMiB = largeDiskMiB;
        this.dir = dir;
    }

    public static void main(String[] args) throws Exception {
        long mib = 1024;
        Layout layout = Layout.deepseekTp4();
        int threads = 4;
        long offheap = 256;
        long smallDisk = 512;
        long largeDisk = 0;
        Path dir = Path.of("target", "ehcache-bench");
        Path json = Path.of("target", "ehcache-peer.json");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--mib" -> mib = Long.parseLong(args[++i]);
                case "--layout" -> layout = Layout.preset(args[++i]);
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--offheap-mib" -> offheap = Long.parseLong(args[++i]);
                case "--small-disk-mib" -> smallDisk = Long.parseLong(args[++i]);
                case "--large-disk-mib" -> largeDisk = Long.parseLong(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                case "--json" -> json = Path.of(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i] + "\nusage: EhcachePeerBench [--mib 1024] "
                            + "[--layout deepseek-tp4] [--threads 4] [--offheap-mib 256] [--small-disk-mib 512] "
                            + "[--large-disk-mib N] [--dir DIR] [--json FILE]");
                    System.exit(2);
                }
            }
        }
        if (largeDisk == 0) {
            largeDisk = mib * 3 / 2;
        }
        EhcachePeerBench bench = new EhcachePeerBench(layout, mib << 20, threads, offheap, smallDisk, largeDisk, dir);
        bench.run();
        System.out.println(bench.markdown());
        Files.createDirectories(json.toAbsolutePath().getParent());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(json.toFile(), bench.json());
        System.out.println("JSON: " + json);
        if (!bench.problems.isEmpty()) {
            System.exit(1);
        }
    }

    private void run() throws Exception {
        DiskPasses.freshDirectory(dir);
        loadBefore = DiskPasses.loadAverage();
        ExecutorService pool = DiskPasses.pool("bench-peer", threads);
        count = BenchRecords.countFor(layout, volumeBytes);
        valueBytes = BenchRecords.bodyBytes(layout);
        try {
            seleneRow(pool);
            ehcacheRow(pool, "disk < volume", smallDiskMiB);
            ehcacheRow(pool, "disk > volume", largeDiskMiB);
        } finally {
            loadAfter = DiskPasses.loadAverage();
            pool.shutdownNow();
            DiskPasses.deleteTree(dir);
        }
    }

    /** Selene's record files: DirectRecordIo on T writer threads, the same records and volume. */
    private void seleneRow(ExecutorService pool) throws Exception {
        Path d = DiskPasses.freshDirectory(dir.resolve("selene"));
        RecordIo io = DirectRecordIo.sequential();
        try (BenchRecords records = BenchRecords.create(layout, count, "bench")) {
            long write = DiskPasses.timed(pool, threads, count, DiskPasses.seleneWrite(io, records, d));
            records.clear();
            long read = DiskPasses.timed(pool, threads, count, DiskPasses.seleneRead(io, records, d));
            int bad = records.verify();
            if (bad > 0) {
                problems.add("selene: " + bad + " records read back wrong");
            }
            Map<String, Object> row = row("Selene DirectRecordIo", "host slots → one O_DIRECT file per record", 0);
            long bytes = records.totalBytes();
            row.put("putGBps", round3(DiskPasses.gbps(bytes, write)));
            row.put("durablePutGBps", round3(DiskPasses.gbps(bytes, write)));
            row.put("getGBps", null);
            row.put("coldGetGBps", round3(DiskPasses.gbps(bytes, read)));
            row.put("restartSeconds", null);
            row.put("lostWithoutError", 0);
            row.put("lostAfterRestart", 0);
            row.put("putErrors", 0);
            rows.add(row);
            System.err.printf(Locale.ROOT, "selene: write %.2f GB/s, read %.2f GB/s%n", row.get("putGBps"),
                    row.get("coldGetGBps"));
        }
        DiskPasses.deleteTree(d);
    }

    private void ehcacheRow(ExecutorService pool, String name, long diskMiB) throws Exception {
        Path d = DiskPasses.freshDirectory(dir.resolve("ehcache-" + diskMiB));
        Map<String, Object> row = row("Ehcache 3.12 " + name, "heap 2 entries, off-heap " + offheapMiB + " MiB, disk "
                + diskMiB + " MiB (persistent)", diskMiB);
        long bytes = (long) count * valueBytes;
        AtomicInteger putErrors = new AtomicInteger();
        long put;
        long close;
        long sync;
        long get;
        int[] missing = new int[1];
        PersistentCacheManager manager = open(d, diskMiB);
        try {
            Cache<Long, byte[]> cache = manager.getCache("records", Long.class, byte[].class);
            ThreadLocal<byte[]> buffers = ThreadLocal.withInitial(this::value);
            put = DiskPasses.timed(pool, threads, count, i -> {
                byte[] value = buffers.get();
                stamp(value, i);
                try {
                    cache.put((long) i, value);
                } catch (RuntimeException e) {
                    putErrors.incrementAndGet();
                    problems.add("ehcache " + name + ": put of " + i + " failed: " + e);
                }
            });
            get = getAll(pool, cache, name, missing);
        } finally {
            long start = System.nanoTime();
            manager.close();
            close = System.nanoTime() - start;
        }
        sync = sync();
        long dropped = dropFromPageCache(d);
        int[] missingAfterRestart = new int[1];
        long restartStart = System.nanoTime();
        PersistentCacheManager reopened = open(d, diskMiB);
        long restart = System.nanoTime() - restartStart;
        long coldGet;
        try {
            coldGet = getAll(pool, reopened.getCache("records", Long.class, byte[].class), name + " after restart",
                    missingAfterRestart);
        } finally {
            reopened.close();
        }
        row.put("putGBps", round3(DiskPasses.gbps(bytes, put)));
        row.put("durablePutGBps", round3(DiskPasses.gbps(bytes, put + close + sync)));
        row.put("getGBps", round3(DiskPasses.gbps(bytes - missing[0] * valueBytes, get)));
        row.put("coldGetGBps", round3(DiskPasses.gbps(bytes - missingAfterRestart[0] * valueBytes, coldGet)));
        row.put("restartSeconds", round3(restart / 1e9));
        row.put("lostWithoutError", missing[0]);
        row.put("lostAfterRestart", missingAfterRestart[0]);
        row.put("putErrors", putErrors.get());
        row.put("closeSeconds", round3(close / 1e9));
        row.put("syncSeconds", round3(sync / 1e9));
        row.put("filesEvictedFromPageCache", dropped);
        row.put("diskFileBytes", treeBytes(d));
        rows.add(row);
        System.err.printf(Locale.ROOT, "ehcache %s: put %.2f GB/s, lost %d of %d without an error%n", name,
                row.get("putGBps"), missing[0], count);
        DiskPasses.deleteTree(d);
    }

    private PersistentCacheManager open(Path d, long diskMiB) {
        return CacheManagerBuilder.newCacheManagerBuilder()
                .with(CacheManagerBuilder.persistence(d.toFile()))
                .withCache("records", CacheConfigurationBuilder.newCacheConfigurationBuilder(Long.class, byte[].class,
                        ResourcePoolsBuilder.newResourcePoolsBuilder()
                                .heap(2, EntryUnit.ENTRIES)
                                .offheap(offheapMiB, MemoryUnit.MB)
                                .disk(diskMiB, MemoryUnit.MB, true)))
                .build(true);
    }

    /** Gets every key on T threads; counts the missing ones into {@code missing[0]}; returns the elapsed nanos. */
    private long getAll(ExecutorService pool, Cache<Long, byte[]> cache, String name, int[] missing)
            throws Exception {
        AtomicInteger absent = new AtomicInteger();
        AtomicInteger wrong = new AtomicInteger();
        long nanos = DiskPasses.timed(pool, threads, count, i -> {
            byte[] value = cache.get((long) i);
            if (value == null) {
                absent.incrementAndGet();
            } else if (!stamped(value, i)) {
                wrong.incrementAndGet();
            }
        });
        if (wrong.get() > 0) {
            problems.add("ehcache " + name + ": " + wrong.get() + " values came back wrong");
        }
        missing[0] = absent.get();
        return nanos;
    }

    private byte[] value() {
        byte[] value = new byte[Math.toIntExact(valueBytes)];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) (i * 31 + 7);
        }
        return value;
    }

    private static void stamp(byte[] value, int key) {
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(0, key);
        b.putLong(value.length - Long.BYTES, ~(long) key);
    }

    private boolean stamped(byte[] value, int key) {
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        return value.length == valueBytes && b.getLong(0) == key && b.getLong(value.length - Long.BYTES) == ~(long) key;
    }

    private Map<String, Object> row(String store, String configuration, long diskMiB) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("store", store);
        row.put("configuration", configuration);
        row.put("entries", count);
        row.put("valueBytes", valueBytes);
        row.put("volumeBytes", count * valueBytes);
        row.put("diskMiB", diskMiB);
        return row;
    }

    private static long sync() throws IOException, InterruptedException {
        long start = System.nanoTime();
        Process p = new ProcessBuilder("sync").inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IOException("sync exited with " + p.exitValue());
        }
        return System.nanoTime() - start;
    }

    /** Evicts every (clean, synced) file under {@code d} from the page cache; returns how many files. */
    private static long dropFromPageCache(Path d) throws IOException {
        MethodHandle fadvise = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("posix_fadvise").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
        long files = 0;
        try (Stream<Path> paths = Files.walk(d)) {
            for (Path file : paths.filter(Files::isRegularFile).toList()) {
                int fd = NativeIo.openDirectForRead(file);
                try {
                    int rc;
                    try {
                        rc = (int) fadvise.invokeExact(fd, 0L, 0L, POSIX_FADV_DONTNEED);
                    } catch (Throwable t) {
                        throw new IOException("posix_fadvise of " + file + " failed", t);
                    }
                    if (rc != 0) {
                        throw new IOException("posix_fadvise(DONTNEED) of " + file + " failed: " + rc);
                    }
                    files++;
                } finally {
                    NativeIo.close(fd, file);
                }
            }
        }
        return files;
    }

    private static long treeBytes(Path d) throws IOException {
        try (Stream<Path> paths = Files.walk(d)) {
            long total = 0;
            for (Path p : paths.filter(Files::isRegularFile).toList()) {
                total += Files.size(p);
            }
            return total;
        }
    }

    private static Double round3(double v) {
        return Double.isNaN(v) ? null : Math.round(v * 1000) / 1000.0;
    }

    private Map<String, Object> json() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("bench", "EhcachePeerBench");
        out.put("time", Instant.now().toString());
        out.put("layout", layout.name());
        out.put("threads", threads);
        out.put("cpus", Runtime.getRuntime().availableProcessors());
        out.put("loadAverageBefore", loadBefore);
        out.put("loadAverageAfter", loadAfter);
        out.put("rows", rows);
        out.put("problems", problems);
        return out;
    }

    private String markdown() {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "# Ehcache 3 peer%n%n%s, %d × %.2f MiB values (%s records), %d threads,"
                        + " %d CPUs (load average %s before, %s after)%n%n", Instant.now(), count, valueBytes / 1048576.0,
                layout.name(), threads, Runtime.getRuntime().availableProcessors(), loadBefore, loadAfter));
        out.append("| store | tiers | put GB/s | durable put GB/s | get GB/s (same session) | get GB/s (from device)"
                + " | restart s | lost without error | lost after restart | put errors |\n");
        out.append("|---|---|---|---|---|---|---|---|---|---|\n");
        for (Map<String, Object> r : rows) {
            out.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s of %d | %s | %s |%n",
                    r.get("store"), r.get("configuration"), fmt(r.get("putGBps")), fmt(r.get("durablePutGBps")),
                    fmt(r.get("getGBps")), fmt(r.get("coldGetGBps")), fmt(r.get("restartSeconds")),
                    r.get("lostWithoutError"), count, r.get("lostAfterRestart"), r.get("putErrors")));
        }
        if (problems.isEmpty()) {
            out.append("\nEvery value got carried its key's stamp; Selene's reads verified every byte.\n");
        } else {
            out.append("\n**Problems:**\n\n");
            problems.forEach(p -> out.append("- ").append(p).append('\n'));
        }
        return out.toString();
    }

    private static String fmt(Object v) {
        return v == null ? "—" : v instanceof Double d ? String.format(Locale.ROOT, "%.2f", d) : v.toString();
    }
}
