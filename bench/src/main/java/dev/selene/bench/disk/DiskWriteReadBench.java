package dev.selene.bench.disk;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.selene.actors.cache.HostCache;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.DirectRecordIo;
import dev.selene.transport.disk.RecordIo;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;

/**
 * Spill writes and restore reads of record files against raw O_DIRECT I/O of the same bytes, in one run
 * (goal: ≥ 0.9× raw both ways).
 *
 * <p>For each layout, {@code N} records with a row sit in adjacent host slots of one {@code HostMemory} mapping.
 * Each round writes all of them in every mode, then reads them back in every mode (the first round verifies every
 * byte read), then deletes the files; the order of the modes rotates from round to round. Modes:
 * <ul>
 *   <li>{@code raw×T}, {@code raw×2T}: the body bytes only, one file per record, O_DIRECT, fallocate, 1 MiB
 *       pwrites, fsync; 1 MiB preads back. {@code T} threads (or 2T) each take the next record.</li>
 *   <li>{@code raw×T+crc32c}: {@code raw×T} plus a CRC32C over the body on the I/O thread (before the write,
 *       after the read), as Selene's sequential record I/O does: how much of Selene's gap is checksum time.</li>
 *   <li>{@code selene×T}: {@link DirectRecordIo#sequential()} on {@code T} writer threads: the whole commit
 *       protocol (header, checksums, footer, fsync, rename, directory fsync) with as many I/Os in flight as
 *       {@code raw×T}; reads verify every checksum.</li>
 *   <li>{@code selene×T+fan-out}: {@link DirectRecordIo#create} with a {@code T}-thread disk pool and 4 transfers
 *       per record, on {@code T} writer threads (a spill scheduler with an in-flight cap of {@code T}): up to
 *       {@code 2T} I/Os in flight.</li>
 * </ul>
 * GB/s counts body bytes for every mode (Selene's 8 KiB of header and footer per record are its overhead). Ratios
 * are medians over rounds of the ratio within each round, so that a noisy machine's drift cancels.
 *
 * <p>Usage: {@code DiskWriteReadBench [--layouts deepseek-tp4,qwen-tp1] [--mib 1024 | --records N] [--threads 12]
 * [--rounds 3] [--dir target/disk-bench] [--json target/disk-write-read.json]}; the threads default to the spill
 * scheduler's in-flight cap ({@link HostCache#SPILL_IN_FLIGHT_CAP}).
 */
public final class DiskWriteReadBench {

    enum Mode {
        RAW, RAW_DOUBLE, RAW_CRC, SELENE, SELENE_FAN_OUT;

        String label(int threads) {
            return switch (this) {
                case RAW -> "raw×" + threads;
                case RAW_DOUBLE -> "raw×" + 2 * threads;
                case RAW_CRC -> "raw×" + threads + "+crc32c";
                case SELENE -> "selene×" + threads;
                case SELENE_FAN_OUT -> "selene×" + threads + "+fan-out";
            };
        }

        int threads(int threads) {
            return this == RAW_DOUBLE ? 2 * threads : threads;
        }

        /** Most I/Os in flight: fan-out adds up to one helper per writer from a pool as large as the writers. */
        int inFlight(int threads) {
            return this == RAW_DOUBLE || this == SELENE_FAN_OUT ? 2 * threads : threads;
        }
    }

    private final List<Layout> layouts;
    private final long volumeBytes;
    private final int fixedRecords;
    private final int threads;
    private final int rounds;
    private final Path dir;
    private final List<Map<String, Object>> results = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();

    private DiskWriteReadBench(List<Layout> layouts, long volumeBytes, int fixedRecords, int threads, int rounds,
                               Path dir) {
        this.layouts = layouts;
        this.volumeBytes = volumeBytes;
        this.fixedRecords = fixedRecords;
        this.threads = threads;
        this.rounds = rounds;
        this.dir = dir;
    }

    public static void main(String[] args) throws Exception {
        List<Layout> layouts = List.of(Layout.deepseekTp4(), Layout.qwenTp1());
        long mib = 1024;
        int records = 0;
        int threads = HostCache.SPILL_IN_FLIGHT_CAP;
        int rounds = 3;
        Path dir = Path.of("target", "disk-bench");
        Path json = Path.of("target", "disk-write-read.json");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--layouts" -> layouts = Arrays.stream(args[++i].split(",")).map(Layout::preset).toList();
                case "--mib" -> mib = Long.parseLong(args[++i]);
                case "--records" -> records = Integer.parseInt(args[++i]);
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                case "--json" -> json = Path.of(args[++i]);
                default -> usage("unknown argument " + args[i]);
            }
        }
        if (mib < 1 || records < 0 || threads < 1 || rounds < 1) {
            usage("--mib, --threads and --rounds must be at least 1, --records at least 0");
        }
        DiskWriteReadBench bench = new DiskWriteReadBench(layouts, mib << 20, records, threads, rounds, dir);
        bench.run();
        String markdown = bench.markdown();
        System.out.println(markdown);
        Path parent = json.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(json.toFile(), bench.json());
        System.out.println("JSON: " + json);
        if (!bench.problems.isEmpty()) {
            System.exit(1);
        }
    }

    private static void usage(String problem) {
        System.err.println(problem + "\nusage: DiskWriteReadBench [--layouts deepseek-tp4,qwen-tp1] [--mib 1024 | "
                + "--records N] [--threads 4] [--rounds 3] [--dir target/disk-bench] [--json FILE]");
        System.exit(2);
    }

    private String store;
    private String loadBefore;
    private String loadAfter;

    private void run() throws Exception {
        DiskPasses.freshDirectory(dir);
        store = DiskPasses.describeStore(dir);
        loadBefore = DiskPasses.loadAverage();
        ExecutorService writers = DiskPasses.pool("bench-writer", 2 * threads);
        ExecutorService diskPool = DiskPasses.pool("bench-disk-io", threads);
        Map<Mode, RecordIo> io = new EnumMap<>(Mode.class);
        io.put(Mode.SELENE, DirectRecordIo.sequential());
        io.put(Mode.SELENE_FAN_OUT, DirectRecordIo.create(diskPool, DirectRecordIo.DEFAULT_TRANSFERS_PER_RECORD));
        try {
            for (Layout layout : layouts) {
                runLayout(layout, writers, io);
            }
        } finally {
            loadAfter = DiskPasses.loadAverage();
            writers.shutdownNow();
            diskPool.shutdownNow();
            DiskPasses.deleteTree(dir);
        }
    }

    private void runLayout(Layout layout, ExecutorService writers, Map<Mode, RecordIo> io) throws Exception {
        int count = fixedRecords > 0 ? fixedRecords : BenchRecords.countFor(layout, volumeBytes);
        Mode[] modes = Mode.values();
        Map<Mode, long[]> writeNanos = new EnumMap<>(Mode.class);
        Map<Mode, long[]> readNanos = new EnumMap<>(Mode.class);
        for (Mode m : modes) {
            writeNanos.put(m, new long[rounds]);
            readNanos.put(m, new long[rounds]);
        }
        try (BenchRecords records = BenchRecords.create(layout, count, "bench")) {
            System.err.printf(Locale.ROOT, "%s: %d records of %.2f MiB (%.0f MiB per pass), %d rounds%n",
                    layout.name(), count, records.bodyBytes() / 1048576.0, records.totalBytes() / 1048576.0, rounds);
            for (int round = 0; round < rounds; round++) {
                Mode[] order = rotated(modes, round);
                for (Mode m : order) {
                    Path d = DiskPasses.freshDirectory(dir.resolve(m.name().toLowerCase(Locale.ROOT)));
                    DiskPasses.RecordTask task = switch (m) {
                        case RAW, RAW_DOUBLE -> DiskPasses.rawWrite(records, d);
                        case RAW_CRC -> DiskPasses.checksummed(records, DiskPasses.rawWrite(records, d), true);
                        case SELENE, SELENE_FAN_OUT -> DiskPasses.seleneWrite(io.get(m), records, d);
                    };
                    writeNanos.get(m)[round] = DiskPasses.timed(writers, m.threads(threads), count, task);
                }
                for (Mode m : order) {
                    Path d = dir.resolve(m.name().toLowerCase(Locale.ROOT));
                    if (round == 0) {
                        records.clear();
                    }
                    DiskPasses.RecordTask task = switch (m) {
                        case RAW, RAW_DOUBLE -> DiskPasses.rawRead(records, d);
                        case RAW_CRC -> DiskPasses.checksummed(records, DiskPasses.rawRead(records, d), false);
                        case SELENE, SELENE_FAN_OUT -> DiskPasses.seleneRead(io.get(m), records, d);
                    };
                    readNanos.get(m)[round] = DiskPasses.timed(writers, m.threads(threads), count, task);
                    if (round == 0) {
                        int bad = records.verify();
                        if (bad > 0) {
                            problems.add(layout.name() + " " + m.label(threads) + ": " + bad + " of " + count
                                    + " records read back wrong");
                        }
                    }
                }
                for (Mode m : modes) {
                    DiskPasses.deleteTree(dir.resolve(m.name().toLowerCase(Locale.ROOT)));
                }
                System.err.printf(Locale.ROOT, "  round %d done%n", round + 1);
            }
            long bytes = records.totalBytes();
            for (Mode m : modes) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("layout", layout.name());
                row.put("recordBytes", records.bodyBytes());
                row.put("records", count);
                row.put("bytesPerPass", bytes);
                row.put("mode", m.label(threads));
                row.put("threads", m.threads(threads));
                row.put("maxIoInFlight", m.inFlight(threads));
                row.put("writeGBps", median(gbps(bytes, writeNanos.get(m))));
                row.put("readGBps", median(gbps(bytes, readNanos.get(m))));
                row.put("writeGBpsByRound", gbps(bytes, writeNanos.get(m)));
                row.put("readGBpsByRound", gbps(bytes, readNanos.get(m)));
                row.put("writeVsRaw", median(ratios(writeNanos.get(Mode.RAW), writeNanos.get(m))));
                row.put("readVsRaw", median(ratios(readNanos.get(Mode.RAW), readNanos.get(m))));
                row.put("writeVsRawDouble", median(ratios(writeNanos.get(Mode.RAW_DOUBLE), writeNanos.get(m))));
                row.put("readVsRawDouble", median(ratios(readNanos.get(Mode.RAW_DOUBLE), readNanos.get(m))));
                results.add(row);
            }
        }
    }

    private static Mode[] rotated(Mode[] modes, int by) {
        Mode[] out = new Mode[modes.length];
        for (int i = 0; i < modes.length; i++) {
            out[i] = modes[(i + by) % modes.length];
        }
        return out;
    }

    private static double[] gbps(long bytes, long[] nanos) {
        return Arrays.stream(nanos).mapToDouble(n -> round3(DiskPasses.gbps(bytes, n))).toArray();
    }

    /** Per round: the mode's throughput over the baseline's (baseline time over mode time). */
    private static double[] ratios(long[] baselineNanos, long[] nanos) {
        double[] out = new double[nanos.length];
        for (int i = 0; i < nanos.length; i++) {
            out[i] = (double) baselineNanos[i] / nanos[i];
        }
        return out;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return round3(n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2);
    }

    private static double round3(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    private Map<String, Object> json() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("bench", "DiskWriteReadBench");
        out.put("time", Instant.now().toString());
        out.put("directory", dir.toAbsolutePath().toString());
        out.put("filesystem", store);
        out.put("threads", threads);
        out.put("rounds", rounds);
        out.put("cpus", Runtime.getRuntime().availableProcessors());
        out.put("loadAverageBefore", loadBefore);
        out.put("loadAverageAfter", loadAfter);
        out.put("results", results);
        out.put("problems", problems);
        return out;
    }

    private String markdown() {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "# Disk write/read vs raw O_DIRECT%n%n%s, %s, %d CPUs (load average "
                        + "%s before, %s after), %d rounds (medians; ratios are medians of per-round ratios)%n%n",
                Instant.now(), store, Runtime.getRuntime().availableProcessors(), loadBefore, loadAfter, rounds));
        out.append("| layout | record | records × volume | mode | I/O in flight | write GB/s | read GB/s "
                + "| write × raw×" + threads + " | read × raw×" + threads + " | write × raw×" + 2 * threads
                + " | read × raw×" + 2 * threads + " |\n");
        out.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Map<String, Object> r : results) {
            out.append(String.format(Locale.ROOT, "| %s | %.2f MiB | %d × %.0f MiB | %s | %d | %.2f | %.2f | %.2f "
                            + "| %.2f | %.2f | %.2f |%n", r.get("layout"), (long) r.get("recordBytes") / 1048576.0,
                    r.get("records"), (long) r.get("bytesPerPass") / 1048576.0, r.get("mode"), r.get("maxIoInFlight"),
                    r.get("writeGBps"), r.get("readGBps"), r.get("writeVsRaw"), r.get("readVsRaw"),
                    r.get("writeVsRawDouble"), r.get("readVsRawDouble")));
        }
        if (problems.isEmpty()) {
            out.append("\nEvery byte read in round 1 verified.\n");
        } else {
            out.append("\n**Problems:**\n\n");
            problems.forEach(p -> out.append("- ").append(p).append('\n'));
        }
        return out.toString();
    }
}
