package dev.selene.bench.gpu;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.CopyMode;
import dev.selene.transport.gpu.CopyPlan;
import dev.selene.transport.gpu.CudaProbe;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.JCudaDeviceCopier;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.RawCudaTransfers;
import dev.selene.transport.host.HostMemory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Device ↔ host bandwidth on a real GPU for 16, 64 and 256 KiB pieces, all measured in one run so that ratios hold:
 * <ol type="a">
 *   <li>{@code pipeline}: records of DeepSeek-like (TP4, 31 pieces per rank) and Qwen-like (TP1, 167 pieces) shapes,
 *       with the piece size as page size, published (D2H) and restored (H2D) through a whole {@link SeleneCache}
 *       node on the JCuda copier, in each kernel mode;</li>
 *   <li>{@code mode}: the same bytes as scattered pieces, through the copier in each {@link CopyMode};</li>
 *   <li>{@code ceiling}: one large raw copy-engine transfer of the same bytes into the same registered memory;</li>
 *   <li>{@code raw-per-piece}: one raw copy-engine transfer per piece, the baseline.</li>
 * </ol>
 * Every GB/s figure is also given as a ratio to the ceiling of its direction and piece size. The first pass of each
 * mode and the first pipeline round are verified byte for byte.
 *
 * For the real DeepSeek (64 KiB pages) and Qwen (16 KiB pages) layouts, the pipeline is also set beside one raw
 * transfer of exactly its bytes, each way.
 *
 * <p>Usage: {@code GpuCopyBench [--out DIR] [--mib N] [--passes N] [--quick]}; writes {@code gpu-bench.json},
 * {@code gpu-bench.md} and {@value #SUMMARY_FILE} (one line: the device and the DeepSeek/Qwen figures) into DIR
 * (default: the working directory) and prints the markdown.
 */
public final class GpuCopyBench {

    private static final int[] PIECE_BYTES = {16 << 10, 64 << 10, 256 << 10};
    /** One line of JSON: the device and the {@link #layouts} figures, for {@code scripts/gpu-check.sh}. */
    static final String SUMMARY_FILE = "gpu-bench-summary.json";
    /** "NAME (device N, compute capability X.Y, CUDA driver A.B)", as {@link JCudaDeviceCopier#device()} says. */
    private static final Pattern DEVICE = Pattern.compile(
            "(.*) \\(device \\d+, compute capability ([0-9.]+), CUDA driver ([0-9.]+)\\)");
    private static final double NANOS_PER_SECOND = 1e9;

    private final long bytesPerCase;
    private final int passes;
    private final List<Map<String, Object>> rows = new ArrayList<>();
    private final Map<String, Double> ceilings = new LinkedHashMap<>();
    private final List<String> problems = new ArrayList<>();
    /** The pipeline at the real DeepSeek and Qwen page sizes beside one raw transfer of the same bytes. */
    private final List<Map<String, Object>> layouts = new ArrayList<>();

    private GpuCopyBench(long bytesPerCase, int passes) {
        this.bytesPerCase = bytesPerCase;
        this.passes = passes;
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(".");
        long mib = 512;
        int passes = 3;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(args[++i]);
                case "--mib" -> mib = Long.parseLong(args[++i]);
                case "--passes" -> passes = Integer.parseInt(args[++i]);
                case "--quick" -> {
                    mib = 128;
                    passes = 2;
                }
                default -> {
                    System.err.println("usage: GpuCopyBench [--out DIR] [--mib N] [--passes N] [--quick]");
                    System.exit(2);
                }
            }
        }
        if (!CudaProbe.isAvailable()) {
            System.out.println("GpuCopyBench: no GPU: " + CudaProbe.unavailabilityCause() + " (nothing measured)");
            return;
        }
        GpuCopyBench bench = new GpuCopyBench(mib << 20, passes);
        bench.run();
        Files.createDirectories(out);
        Files.writeString(out.resolve("gpu-bench.json"), bench.json());
        String markdown = bench.markdown();
        Files.writeString(out.resolve("gpu-bench.md"), markdown);
        Files.writeString(out.resolve(SUMMARY_FILE), bench.summary() + "\n");
        System.out.println(markdown);
        if (!bench.problems.isEmpty()) {
            System.exit(1);
        }
    }

    private void run() throws Exception {
        String device;
        try (JCudaDeviceCopier probe = JCudaDeviceCopier.create(CopyMode.KERNEL_DIRECT, 0)) {
            device = probe.device();
        }
        System.err.println("GpuCopyBench on " + device + ", " + (bytesPerCase >> 20) + " MiB per case, " + passes
                + " passes");
        this.device = device;
        for (int pieceBytes : PIECE_BYTES) {
            directCases(pieceBytes);
            for (CopyMode mode : List.of(CopyMode.KERNEL_DIRECT, CopyMode.KERNEL_STAGED)) {
                pipelineCase(pieceBytes, mode, deepseekLike(pieceBytes));
                pipelineCase(pieceBytes, mode, qwenLike(pieceBytes));
            }
        }
    }

    private String device;

    /** DeepSeek-like: TP4, 8 pages and a row of 23 pages per record. */
    static Layout deepseekLike(int pieceBytes) {
        return new Layout("deepseek-tp4@" + pieceBytes / 1024 + "k", 4, pieceBytes, 23 * pieceBytes, 8, 64);
    }

    /** Qwen-like: TP1, 32 pages and a row of 135 pages per record. */
    static Layout qwenLike(int pieceBytes) {
        return new Layout("qwen-tp1@" + pieceBytes / 1024 + "k", 1, pieceBytes, 135 * pieceBytes, 32, 16);
    }

    /** (b), (c), (d): scattered pieces through each mode, and raw transfers, on one device region and host mapping. */
    private void directCases(int pieceBytes) throws Exception {
        int pieces = (int) (bytesPerCase / pieceBytes);
        long bytes = (long) pieces * pieceBytes;
        Layout layout = new Layout("pieces@" + pieceBytes / 1024 + "k", 1, pieceBytes, 0, 1, 16);
        Random random = new Random(pieceBytes);
        int[] devicePiece = permutation(pieces, random);
        int[] hostSlot = permutation(pieces, random);
        int piecesPerPlan = Math.max(1, (2 << 20) / pieceBytes);
        for (CopyMode mode : CopyMode.values()) {
            try (JCudaDeviceCopier copier = JCudaDeviceCopier.create(mode, 0);
                 HostMemory host = HostMemory.allocate(layout, pieces)) {
                copier.register(host);
                long source = copier.allocateDevice(bytes);
                long target = copier.allocateDevice(bytes);
                fillPieces(copier, source, pieces, pieceBytes);
                if (mode == CopyMode.KERNEL_DIRECT) {
                    rawCases(copier, host, source, bytes, pieceBytes, devicePiece, hostSlot);
                }
                List<CopyPlan> toHost = plans(host, source, devicePiece, hostSlot, pieceBytes, piecesPerPlan);
                List<CopyPlan> toDevice = plans(host, target, devicePiece, hostSlot, pieceBytes, piecesPerPlan);
                double d2h = bestGbps(bytes, () -> awaitAll(toHost.stream().map(copier::copyToHost).toList()));
                verifyHost(host, devicePiece, hostSlot, pieceBytes, "mode " + mode.label());
                double h2d = bestGbps(bytes, () -> awaitAll(toDevice.stream().map(copier::copyToDevice).toList()));
                verifyDevice(copier, target, pieces, pieceBytes, "mode " + mode.label());
                row("mode", mode.label(), "scattered pieces", pieceBytes, bytes, d2h, h2d);
            }
        }
    }

    /** (c) the ceiling and (d) the raw per-piece baseline, into the same registered memory. */
    private void rawCases(JCudaDeviceCopier copier, HostMemory host, long device, long bytes, int pieceBytes,
                          int[] devicePiece, int[] hostSlot) throws Exception {
        long hostBase = host.segment().address();
        try (RawCudaTransfers raw = RawCudaTransfers.on(copier)) {
            double d2h = bestGbps(bytes, () -> {
                raw.copyToHost(hostBase, device, bytes);
                raw.synchronize();
            });
            double h2d = bestGbps(bytes, () -> {
                raw.copyToDevice(device, hostBase, bytes);
                raw.synchronize();
            });
            ceilings.put(key("d2h", pieceBytes), d2h);
            ceilings.put(key("h2d", pieceBytes), h2d);
            row("ceiling", "raw", "one transfer of all bytes", pieceBytes, bytes, d2h, h2d);
            double pieceD2h = bestGbps(bytes, () -> {
                for (int i = 0; i < devicePiece.length; i++) {
                    raw.copyToHost(host.address(hostSlot[i], 0), device + (long) devicePiece[i] * pieceBytes,
                            pieceBytes);
                }
                raw.synchronize();
            });
            double pieceH2d = bestGbps(bytes, () -> {
                for (int i = 0; i < devicePiece.length; i++) {
                    raw.copyToDevice(device + (long) devicePiece[i] * pieceBytes, host.address(hostSlot[i], 0),
                            pieceBytes);
                }
                raw.synchronize();
            });
            row("raw-per-piece", "raw", "one transfer per piece", pieceBytes, bytes, pieceD2h, pieceH2d);
        }
        fillPieces(copier, device, devicePiece.length, pieceBytes);
    }

    /** (a) publish and restore whole records through a cache node on the JCuda copier. */
    private void pipelineCase(int pieceBytes, CopyMode mode, Layout layout) throws Exception {
        long recordBytes = layout.recordBytes(true);
        int records = (int) Math.max(8, bytesPerCase / recordBytes);
        long totalBytes = records * recordBytes;
        long warm = (long) (records * (passes + 1) * layout.slotsPerRecord(true) * layout.slotBytes() * 1.1);
        CacheConfig config = CacheConfig.memoryOnly(layout, warm).withConcurrency(Math.min(records, 64))
                .withHostBudgetBytes(warm + (4L << 30)).withDevice("cuda");
        try (JCudaDeviceCopier copier = JCudaDeviceCopier.create(mode, 0)) {
            List<DevicePlacement> snapshots = new ArrayList<>();
            List<DevicePlacement> targets = new ArrayList<>();
            for (int r = 0; r < records; r++) {
                DevicePlacement snapshot = DevicePlacement.contiguous(layout,
                        copier.allocateDevice(DevicePlacement.bytesNeeded(layout, true)), true);
                KeyedContent.fillRecord(copier, layout, snapshot, key(0, r), true);
                snapshots.add(snapshot);
                targets.add(DevicePlacement.contiguous(layout,
                        copier.allocateDevice(DevicePlacement.bytesNeeded(layout, true)), true));
            }
            double bestPublish = 0;
            double bestRestore = 0;
            try (SeleneCache cache = SeleneCache.start(config, copier)) {
                for (int round = 0; round <= passes; round++) {
                    int roundNumber = round;
                    long start = System.nanoTime();
                    List<CompletableFuture<PublishResult>> published = new ArrayList<>();
                    for (int r = 0; r < records; r++) {
                        published.add(cache.publish(new RecordSpec(key(roundNumber, r), null, true), snapshots.get(r))
                                .toCompletableFuture());
                    }
                    CompletableFuture.allOf(published.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
                    double publish = totalBytes / (double) (System.nanoTime() - start);
                    long stored = published.stream().filter(f -> f.join() instanceof PublishResult.Stored).count();
                    if (stored != records) {
                        problems.add("pipeline " + layout.name() + " " + mode.label() + " round " + round + ": "
                                + stored + "/" + records + " stored, e.g. " + published.getFirst().join());
                    }
                    start = System.nanoTime();
                    List<CompletableFuture<RestoreResult>> restored = new ArrayList<>();
                    for (int r = 0; r < records; r++) {
                        restored.add(cache.restore(namespace(roundNumber), new long[] {key(roundNumber, r).hash()},
                                List.of(targets.get(r)), Duration.ofHours(1)).toCompletableFuture());
                    }
                    CompletableFuture.allOf(restored.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
                    double restore = totalBytes / (double) (System.nanoTime() - start);
                    long ok = restored.stream().filter(f -> f.join().outcome() == RestoreResult.Outcome.RESTORED)
                            .count();
                    if (ok != records) {
                        problems.add("pipeline " + layout.name() + " " + mode.label() + " round " + round + ": "
                                + ok + "/" + records + " restored, e.g. " + restored.getFirst().join());
                    }
                    if (round == 0) {
                        for (int r = 0; r < records; r++) {
                            if (!KeyedContent.verifyRecord(copier, layout, targets.get(r), key(0, r), true)) {
                                problems.add("pipeline " + layout.name() + " " + mode.label()
                                        + ": restored record " + r + " differs");
                                break;
                            }
                        }
                    } else {
                        bestPublish = Math.max(bestPublish, publish);
                        bestRestore = Math.max(bestRestore, restore);
                    }
                }
            }
            row("pipeline", mode.label(), layout.name() + ", " + records + " records", pieceBytes, totalBytes,
                    bestPublish, bestRestore);
            if (isRealLayout(layout)) {
                double[] raw = rawSameBytes(copier, totalBytes, pieceBytes);
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("layout", layout.name());
                entry.put("mode", mode.label());
                entry.put("bytes", totalBytes);
                entry.put("d2hGBps", bestPublish);
                entry.put("h2dGBps", bestRestore);
                entry.put("rawD2hGBps", raw[0]);
                entry.put("rawH2dGBps", raw[1]);
                entry.put("d2hRatio", raw[0] == 0 ? Double.NaN : bestPublish / raw[0]);
                entry.put("h2dRatio", raw[1] == 0 ? Double.NaN : bestRestore / raw[1]);
                layouts.add(entry);
            }
        }
    }

    /** DeepSeek TP4 at its real 64 KiB pages, Qwen TP1 at its real 16 KiB pages. */
    private static boolean isRealLayout(Layout layout) {
        return layout.equals(deepseekLike(Layout.deepseekTp4().pageBytes()))
                || layout.equals(qwenLike(Layout.qwenTp1().pageBytes()));
    }

    /**
     * One raw transfer of {@code bytes} bytes each way between one device allocation and one registered mapping:
     * what the pipeline's bytes would take as a single copy-engine transfer; best of {@link #passes}.
     */
    private double[] rawSameBytes(JCudaDeviceCopier copier, long bytes, int pieceBytes) throws Exception {
        Layout flat = new Layout("raw@" + pieceBytes / 1024 + "k", 1, pieceBytes, 0, 1, 16);
        int slots = (int) ((bytes + pieceBytes - 1) / pieceBytes);
        long device = copier.allocateDevice(bytes);
        try (HostMemory host = HostMemory.allocate(flat, slots);
             RawCudaTransfers raw = RawCudaTransfers.on(copier)) {
            copier.register(host);
            long hostBase = host.segment().address();
            double d2h = bestGbps(bytes, () -> {
                raw.copyToHost(hostBase, device, bytes);
                raw.synchronize();
            });
            double h2d = bestGbps(bytes, () -> {
                raw.copyToDevice(device, hostBase, bytes);
                raw.synchronize();
            });
            return new double[] {d2h, h2d};
        } finally {
            copier.freeDevice(device);
        }
    }

    private static String namespace(int round) {
        return "gpu-bench-" + round;
    }

    private static RecordKey key(int round, int record) {
        return new RecordKey(namespace(round), 0x5E1E_0000_0000L + record);
    }

    private static List<CopyPlan> plans(HostMemory host, long deviceBase, int[] devicePiece, int[] hostSlot,
                                        int pieceBytes, int piecesPerPlan) {
        List<CopyPlan> plans = new ArrayList<>();
        for (int first = 0; first < devicePiece.length; first += piecesPerPlan) {
            int n = Math.min(piecesPerPlan, devicePiece.length - first);
            long[] device = new long[n];
            long[] hostAddresses = new long[n];
            int[] lengths = new int[n];
            for (int i = 0; i < n; i++) {
                device[i] = deviceBase + (long) devicePiece[first + i] * pieceBytes;
                hostAddresses[i] = host.address(hostSlot[first + i], 0);
                lengths[i] = pieceBytes;
            }
            plans.add(new CopyPlan(device, hostAddresses, lengths));
        }
        return plans;
    }

    /** Device piece p holds the keyed stream of seed p. */
    private static void fillPieces(JCudaDeviceCopier copier, long device, int pieces, int pieceBytes) {
        try (Arena arena = Arena.ofConfined()) {
            int chunkPieces = Math.max(1, (64 << 20) / pieceBytes);
            MemorySegment buffer = arena.allocate((long) chunkPieces * pieceBytes, 4096);
            for (int first = 0; first < pieces; first += chunkPieces) {
                int n = Math.min(chunkPieces, pieces - first);
                for (int i = 0; i < n; i++) {
                    KeyedContent.fill(buffer.asSlice((long) i * pieceBytes, pieceBytes), first + i);
                }
                copier.writeDevice(device + (long) first * pieceBytes, buffer.asSlice(0, (long) n * pieceBytes));
            }
        }
    }

    private void verifyHost(HostMemory host, int[] devicePiece, int[] hostSlot, int pieceBytes, String what) {
        for (int i = 0; i < devicePiece.length; i++) {
            if (KeyedContent.firstMismatch(host.share(hostSlot[i], 0, pieceBytes), devicePiece[i]) >= 0) {
                problems.add(what + ": host slot " + hostSlot[i] + " differs after D2H");
                return;
            }
        }
    }

    private void verifyDevice(JCudaDeviceCopier copier, long device, int pieces, int pieceBytes, String what) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment piece = arena.allocate(pieceBytes, 4096);
            for (int p = 0; p < pieces; p++) {
                copier.readDevice(device + (long) p * pieceBytes, piece);
                if (KeyedContent.firstMismatch(piece, p) >= 0) {
                    problems.add(what + ": device piece " + p + " differs after H2D");
                    return;
                }
            }
        }
    }

    private interface Pass {
        void run() throws Exception;
    }

    /** Best GB/s over {@link #passes} timed passes after one warm-up pass. */
    private double bestGbps(long bytes, Pass pass) throws Exception {
        pass.run();
        double best = 0;
        for (int i = 0; i < passes; i++) {
            long start = System.nanoTime();
            pass.run();
            best = Math.max(best, bytes / (double) (System.nanoTime() - start));
        }
        return best;
    }

    private static void awaitAll(List<CompletableFuture<Void>> futures) throws Exception {
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    }

    private static int[] permutation(int n, Random random) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }

    private static String key(String direction, int pieceBytes) {
        return direction + "@" + pieceBytes;
    }

    private void row(String path, String mode, String what, int pieceBytes, long bytes, double d2h, double h2d) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("path", path);
        row.put("mode", mode);
        row.put("what", what);
        row.put("pieceKiB", pieceBytes / 1024);
        row.put("bytes", bytes);
        row.put("d2hGBps", d2h);
        row.put("h2dGBps", h2d);
        rows.add(row);
        System.err.printf(Locale.ROOT, "%-13s %-13s %4d KiB  D2H %6.1f GB/s  H2D %6.1f GB/s  (%s)%n", path, mode,
                pieceBytes / 1024, d2h, h2d, what);
    }

    private double ratio(Map<String, Object> row, String direction) {
        Double ceiling = ceilings.get(key(direction, (Integer) row.get("pieceKiB") * 1024));
        double value = (Double) row.get(direction + "GBps");
        return ceiling == null || ceiling == 0 ? Double.NaN : value / ceiling;
    }

    private String json() {
        StringBuilder out = new StringBuilder();
        out.append("{\n  \"device\": \"").append(device.replace("\"", "'")).append("\",\n");
        out.append("  \"time\": \"").append(Instant.now()).append("\",\n");
        out.append("  \"bytesPerCase\": ").append(bytesPerCase).append(",\n  \"passes\": ").append(passes)
                .append(",\n  \"problems\": [");
        for (int i = 0; i < problems.size(); i++) {
            out.append(i == 0 ? "" : ", ").append('"').append(problems.get(i).replace("\"", "'")).append('"');
        }
        out.append("],\n  \"rows\": [\n");
        for (int i = 0; i < rows.size(); i++) {
            Map<String, Object> row = rows.get(i);
            out.append(String.format(Locale.ROOT, "    {\"path\": \"%s\", \"mode\": \"%s\", \"what\": \"%s\", "
                            + "\"pieceKiB\": %d, \"bytes\": %d, \"d2hGBps\": %.2f, \"h2dGBps\": %.2f, "
                            + "\"d2hOfCeiling\": %.3f, \"h2dOfCeiling\": %.3f}%s%n",
                    row.get("path"), row.get("mode"), row.get("what"), row.get("pieceKiB"), row.get("bytes"),
                    row.get("d2hGBps"), row.get("h2dGBps"), ratio(row, "d2h"), ratio(row, "h2d"),
                    i + 1 < rows.size() ? "," : ""));
        }
        out.append("  ]\n}\n");
        return out.toString().replace("NaN", "null");
    }

    /** One line: {"device", "computeCapability", "cudaDriver", "problems", "layouts": [...]}. */
    private String summary() {
        Matcher m = DEVICE.matcher(device);
        boolean parsed = m.matches();
        StringBuilder out = new StringBuilder("{");
        out.append("\"device\": \"").append(jsonText(parsed ? m.group(1) : device)).append('"');
        out.append(", \"computeCapability\": ").append(parsed ? '"' + m.group(2) + '"' : "null");
        out.append(", \"cudaDriver\": ").append(parsed ? '"' + m.group(3) + '"' : "null");
        out.append(", \"problems\": ").append(problems.size()).append(", \"layouts\": [");
        for (int i = 0; i < layouts.size(); i++) {
            Map<String, Object> e = layouts.get(i);
            out.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "{\"layout\": \"%s\", "
                            + "\"mode\": \"%s\", \"bytes\": %d, \"d2hGBps\": %.2f, \"h2dGBps\": %.2f, "
                            + "\"rawD2hGBps\": %.2f, \"rawH2dGBps\": %.2f, \"d2hRatio\": %.3f, \"h2dRatio\": %.3f}",
                    e.get("layout"), e.get("mode"), e.get("bytes"), e.get("d2hGBps"), e.get("h2dGBps"),
                    e.get("rawD2hGBps"), e.get("rawH2dGBps"), e.get("d2hRatio"), e.get("h2dRatio")));
        }
        return out.append("]}").toString().replace("NaN", "null");
    }

    private static String jsonText(String text) {
        return text.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    private String markdown() {
        StringBuilder out = new StringBuilder();
        out.append("# GPU copy benchmark\n\n").append(device).append(", ").append(Instant.now()).append(", ")
                .append(bytesPerCase >> 20).append(" MiB per case, best of ").append(passes).append(" passes\n\n");
        out.append("| path | mode | piece | what | D2H GB/s | × ceiling | H2D GB/s | × ceiling |\n");
        out.append("|---|---|---|---|---|---|---|---|\n");
        for (Map<String, Object> row : rows) {
            out.append(String.format(Locale.ROOT, "| %s | %s | %d KiB | %s | %.1f | %.2f | %.1f | %.2f |%n",
                    row.get("path"), row.get("mode"), row.get("pieceKiB"), row.get("what"), row.get("d2hGBps"),
                    ratio(row, "d2h"), row.get("h2dGBps"), ratio(row, "h2d")));
        }
        out.append("\nGoal: pipeline ≥ 0.90 × ceiling at every piece size.\n");
        out.append("\n| layout | mode | MiB | D2H GB/s | raw D2H | ratio | H2D GB/s | raw H2D | ratio |\n");
        out.append("|---|---|---|---|---|---|---|---|---|\n");
        for (Map<String, Object> e : layouts) {
            out.append(String.format(Locale.ROOT, "| %s | %s | %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |%n",
                    e.get("layout"), e.get("mode"), (Long) e.get("bytes") >> 20, e.get("d2hGBps"),
                    e.get("rawD2hGBps"), e.get("d2hRatio"), e.get("h2dGBps"), e.get("rawH2dGBps"),
                    e.get("h2dRatio")));
        }
        out.append("\nraw: one copy-engine transfer of the same bytes each way, between one device allocation and "
                + "one registered mapping.\n");
        if (problems.isEmpty()) {
            out.append("\nAll verified byte for byte: no problems.\n");
        } else {
            out.append("\n**Problems:**\n\n");
            problems.forEach(p -> out.append("- ").append(p).append('\n'));
        }
        return out.toString();
    }
}
