package dev.selene.bench.disk;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.selene.engine.codec.RecordChecksums;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordFooter;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.DirectRecordIo;
import dev.selene.transport.disk.DirectoryLock;
import dev.selene.transport.disk.RecordFileNames;
import dev.selene.transport.disk.RecordIo;
import dev.selene.transport.disk.RecoveryScan;
import dev.selene.transport.disk.ShareMemory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.stream.Stream;

/**
 * Start-up recovery time for many small record files: {@link RecoveryScan#run} over 100,000 files of
 * {@link Layout#small()} at {@code HEADERS} depth, and at {@code FULL} depth over a 10,000-file subset.
 *
 * <p>Creating 100,000 files through {@link DirectRecordIo} costs two fsyncs each (file and directory), so the bench
 * commits only a sample of them that way (timing the commit rate) and writes the rest with the same codec
 * ({@link RecordHeader}, {@link RecordChecksums}, {@link RecordFooter}) through plain {@link FileChannel} writes,
 * then one {@code sync}. Before anything is timed it checks that both writers produce byte-identical files, and
 * every scan must return every file as valid. A last, diagnostic row reads every header on {@code threads} threads
 * (not a recovery scan): what validating files in parallel could reach.
 *
 * <p>Usage: {@code RecoveryBench [--files 100000] [--full-files 10000] [--committed 2000] [--with-row]
 * [--threads 4] [--dir target/recovery-bench] [--json target/recovery.json]}
 */
public final class RecoveryBench {

    private static final String NAMESPACE = "bench";

    private final Layout layout = Layout.small();
    private final int files;
    private final int fullFiles;
    private final int committed;
    private final boolean withRow;
    private final int threads;
    private final Path dir;
    private final Map<String, Object> results = new LinkedHashMap<>();
    private final List<String> problems = new ArrayList<>();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment body;
    private final RecordChecksums sums;

    private RecoveryBench(int files, int fullFiles, int committed, boolean withRow, int threads, Path dir) {
        this.files = files;
        this.fullFiles = fullFiles;
        this.committed = Math.min(committed, files);
        this.withRow = withRow;
        this.threads = threads;
        this.dir = dir;
        this.body = arena.allocate(RecordFileFormat.bodyBytes(layout, withRow), RecordFileFormat.BLOCK_BYTES);
        fillBody();
        this.sums = RecordChecksums.of(layout, withRow, shares());
    }

    public static void main(String[] args) throws Exception {
        int files = 100_000;
        int fullFiles = 10_000;
        int committed = 2_000;
        boolean withRow = false;
        int threads = 4;
        Path dir = Path.of("target", "recovery-bench");
        Path json = Path.of("target", "recovery.json");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--files" -> files = Integer.parseInt(args[++i]);
                case "--full-files" -> fullFiles = Integer.parseInt(args[++i]);
                case "--committed" -> committed = Integer.parseInt(args[++i]);
                case "--with-row" -> withRow = true;
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                case "--json" -> json = Path.of(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i] + "\nusage: RecoveryBench [--files 100000] "
                            + "[--full-files 10000] [--committed 2000] [--with-row] [--threads 4] [--dir DIR] "
                            + "[--json FILE]");
                    System.exit(2);
                }
            }
        }
        RecoveryBench bench = new RecoveryBench(files, fullFiles, committed, withRow, threads, dir);
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
        results.put("filesystem", DiskPasses.describeStore(dir));
        results.put("loadAverageBefore", DiskPasses.loadAverage());
        ExecutorService pool = DiskPasses.pool("bench-create", threads);
        RecordIo io = DirectRecordIo.sequential();
        try {
            checkWritersAgree(io);

            Path all = DiskPasses.freshDirectory(dir.resolve("all"));
            long commitNanos = DiskPasses.timed(pool, threads, committed,
                    i -> io.write(spec(i), layout, shares(), all));
            results.put("committedFiles", committed);
            results.put("commitSeconds", seconds(commitNanos));
            results.put("commitFilesPerSecond", perSecond(committed, commitNanos));
            System.err.printf(Locale.ROOT, "committed %d files with DirectRecordIo in %.1f s%n", committed,
                    seconds(commitNanos));

            long createNanos = DiskPasses.timed(pool, threads, files - committed,
                    i -> writeWithCodec(all, committed + i));
            long syncNanos = sync();
            results.put("codecWrittenFiles", files - committed);
            results.put("codecWriteSeconds", seconds(createNanos));
            results.put("syncSeconds", seconds(syncNanos));
            System.err.printf(Locale.ROOT, "wrote %d more with the codec in %.1f s, sync %.1f s%n", files - committed,
                    seconds(createNanos), seconds(syncNanos));

            scan("headers", all, io, RecoveryScan.Depth.HEADERS, files);
            scan("headers-again", all, io, RecoveryScan.Depth.HEADERS, files);
            parallelHeaders("readHeader-parallel", all, io, pool, files);
            DiskPasses.deleteTree(all);

            Path subset = DiskPasses.freshDirectory(dir.resolve("subset"));
            DiskPasses.timed(pool, threads, fullFiles, i -> writeWithCodec(subset, i));
            sync();
            scan("subset-headers", subset, io, RecoveryScan.Depth.HEADERS, fullFiles);
            scan("subset-full", subset, io, RecoveryScan.Depth.FULL, fullFiles);
        } finally {
            results.put("loadAverageAfter", DiskPasses.loadAverage());
            pool.shutdownNow();
            DiskPasses.deleteTree(dir);
            arena.close();
        }
    }

    /** DirectRecordIo and the codec-only writer must produce the same bytes for the same record. */
    private void checkWritersAgree(RecordIo io) throws IOException {
        Path a = DiskPasses.freshDirectory(dir.resolve("check-direct"));
        Path b = DiskPasses.freshDirectory(dir.resolve("check-codec"));
        io.write(spec(0), layout, shares(), a);
        writeWithCodec(b, 0);
        Path fa = io.fileOf(a, spec(0).key());
        Path fb = io.fileOf(b, spec(0).key());
        long mismatch = Files.mismatch(fa, fb);
        if (mismatch != -1) {
            throw new IllegalStateException("the codec-only writer disagrees with DirectRecordIo at byte " + mismatch
                    + " of " + fa + " and " + fb + "; the files would not be valid record files");
        }
        DiskPasses.deleteTree(a);
        DiskPasses.deleteTree(b);
    }

    private void scan(String name, Path scanned, RecordIo io, RecoveryScan.Depth depth, int expected)
            throws IOException {
        long start = System.nanoTime();
        RecoveryScan.Result result;
        try (DirectoryLock lock = DirectoryLock.acquire(scanned)) {
            result = RecoveryScan.run(lock, io, layout, depth);
        }
        long nanos = System.nanoTime() - start;
        if (result.records().size() != expected || result.rejected() != 0) {
            problems.add(name + ": " + result.records().size() + " valid of " + expected + ", " + result.rejected()
                    + " rejected");
        }
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("depth", depth.name());
        row.put("files", expected);
        row.put("valid", result.records().size());
        row.put("rejected", result.rejected());
        row.put("seconds", seconds(nanos));
        row.put("filesPerSecond", perSecond(expected, nanos));
        results.put(name, row);
        System.err.printf(Locale.ROOT, "%s: %d files at %s in %.2f s%n", name, expected, depth, seconds(nanos));
    }

    /**
     * Not a recovery: {@link RecordIo#readHeader} of every file on {@code threads} threads, after listing the
     * directory; what a scan that validated files in parallel could reach, for comparison with the one-thread scan.
     */
    private void parallelHeaders(String name, Path scanned, RecordIo io, ExecutorService pool, int expected)
            throws Exception {
        long start = System.nanoTime();
        List<Path> found;
        try (Stream<Path> listing = Files.list(scanned)) {
            found = listing.filter(RecordFileNames::isRecordFile).sorted().toList();
        }
        long nanos = (System.nanoTime() - start) + DiskPasses.timed(pool, threads, found.size(),
                i -> io.readHeader(found.get(i)));
        if (found.size() != expected) {
            problems.add(name + ": listed " + found.size() + " of " + expected + " files");
        }
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("depth", "readHeader ×" + threads + " threads");
        row.put("files", found.size());
        row.put("valid", found.size());
        row.put("rejected", 0);
        row.put("seconds", seconds(nanos));
        row.put("filesPerSecond", perSecond(found.size(), nanos));
        results.put(name, row);
        System.err.printf(Locale.ROOT, "%s: %d files in %.2f s%n", name, found.size(), seconds(nanos));
    }

    /** A record file made with the codec and a plain FileChannel: header, body, footer; no fsync, no rename. */
    private void writeWithCodec(Path into, int i) throws IOException {
        RecordHeader header = RecordHeader.current(spec(i), layout);
        ByteBuffer headerBlock = ByteBuffer.allocate(RecordFileFormat.HEADER_BYTES);
        MemorySegment headerSegment = MemorySegment.ofBuffer(headerBlock);
        header.encodeTo(headerSegment);
        ByteBuffer footerBlock = ByteBuffer.allocate(header.footerBytes());
        RecordFooter.of(header, headerSegment, sums).encodeTo(MemorySegment.ofBuffer(footerBlock), header);
        ByteBuffer[] parts = {headerBlock, body.asByteBuffer(), footerBlock};
        Path file = RecordFileNames.recordFile(into, spec(i).key());
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            long remaining = header.fileLength();
            while (remaining > 0) {
                remaining -= channel.write(parts);
            }
        }
    }

    /** Flushes everything written through the page cache, so that the scans read from the device. */
    private static long sync() throws IOException, InterruptedException {
        long start = System.nanoTime();
        Process p = new ProcessBuilder("sync").inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IOException("sync exited with " + p.exitValue());
        }
        return System.nanoTime() - start;
    }

    private RecordSpec spec(int i) {
        return new RecordSpec(new RecordKey(NAMESPACE, 0x1000_0000_0000_0000L + i * 0x9E37_79B9L), null, withRow);
    }

    /** The one body every file holds: bytes that vary, zeros past the used part of a partly used row piece. */
    private void fillBody() {
        for (long at = 0; at < body.byteSize(); at++) {
            body.set(ValueLayout.JAVA_BYTE, at, (byte) (at * 31 + 7));
        }
        int pieces = RecordFileFormat.pieceCount(layout, withRow);
        for (int piece = 0; piece < pieces; piece++) {
            int used = layout.pieceBytes(piece);
            for (int rank = 0; rank < layout.ranks(); rank++) {
                share(piece, rank).asSlice(used).fill((byte) 0);
            }
        }
    }

    private ShareMemory shares() {
        return this::share;
    }

    private MemorySegment share(int piece, int rank) {
        return body.asSlice(((long) piece * layout.ranks() + rank) * layout.pageBytes(), layout.pageBytes());
    }

    private static double seconds(long nanos) {
        return Math.round(nanos / 1e6) / 1000.0;
    }

    private static double perSecond(int count, long nanos) {
        return Math.round(count / (nanos / 1e9));
    }

    private Map<String, Object> json() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("bench", "RecoveryBench");
        out.put("time", Instant.now().toString());
        out.put("layout", layout.name());
        out.put("withRow", withRow);
        out.put("fileBytes", RecordFileFormat.fileLength(layout, withRow));
        out.put("files", files);
        out.put("threads", threads);
        out.put("cpus", Runtime.getRuntime().availableProcessors());
        out.putAll(results);
        out.put("problems", problems);
        return out;
    }

    @SuppressWarnings("unchecked")
    private String markdown() {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "# Recovery scan%n%n%s, %s, layout small %s, %d-byte files, %d CPUs "
                        + "(load average %s before, %s after)%n%n", Instant.now(), results.get("filesystem"),
                withRow ? "with a row" : "page-only", RecordFileFormat.fileLength(layout, withRow),
                Runtime.getRuntime().availableProcessors(), results.get("loadAverageBefore"),
                results.get("loadAverageAfter")));
        out.append("| scan | depth | files | seconds | files/s |\n|---|---|---|---|---|\n");
        for (String name : List.of("headers", "headers-again", "readHeader-parallel", "subset-headers",
                "subset-full")) {
            Map<String, Object> r = (Map<String, Object>) results.get(name);
            if (r != null) {
                out.append(String.format(Locale.ROOT, "| %s | %s | %d | %.2f | %.0f |%n", name, r.get("depth"),
                        r.get("files"), r.get("seconds"), r.get("filesPerSecond")));
            }
        }
        out.append(String.format(Locale.ROOT, "%nCreating them: %d committed through DirectRecordIo (%d threads) in "
                        + "%.1f s = %.0f files/s; %d written with the codec through FileChannel in %.1f s, then sync "
                        + "%.1f s.%n", committed, threads, results.get("commitSeconds"),
                results.get("commitFilesPerSecond"), files - committed, results.get("codecWriteSeconds"),
                results.get("syncSeconds")));
        if (problems.isEmpty()) {
            out.append("\nEvery scan found every file valid.\n");
        } else {
            out.append("\n**Problems:**\n\n");
            problems.forEach(p -> out.append("- ").append(p).append('\n'));
        }
        return out.toString();
    }
}
