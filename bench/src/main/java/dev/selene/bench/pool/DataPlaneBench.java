package dev.selene.bench.pool;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.DataPlane;
import dev.selene.transport.pool.NettyDataPlane;
import dev.selene.transport.pool.OutgoingImage;
import dev.selene.transport.pool.ReceivedImage;
import dev.selene.transport.pool.RecordImage;
import dev.selene.transport.pool.RecordService;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The pool's data plane alone, in one JVM over loopback: record images pushed from slots into a store's slots and
 * fetched back, against the raw transfers of the same bytes on the same plane, alternated round by round. It tells
 * what the record path (framing, wire protocol, the store's answer, landing and checking) costs above the bytes
 * themselves, apart from the actors and the cluster that decide what moves.
 *
 * <p>Each receiver is a serving data plane over a store that keeps records in preallocated slot memory (a ring of
 * records, as a manager's slots) and answers on the thread that asks, or, with {@code --store-hop}, through a
 * one-thread executor standing in for an actor's mailbox. Pushes go to every receiver (one replica per receiver),
 * {@code --concurrency} records in flight; fetches take each record from one receiver, spread evenly. The raw modes
 * move the same number of bytes, written to every receiver at once and read a share from each, in slot-sized chunks.
 * CPU is the process's (both ends, every thread, JIT and GC included, after a warm-up round) and the data threads'
 * alone, per GB of record bytes.
 *
 * <p>Usage: {@code DataPlaneBench [--layout deepseek-tp4] [--mib 1024] [--receivers 2] [--concurrency 32]
 * [--rounds 5] [--backend epoll|nio] [--threads 2] [--store-hop]}. Run with {@code --enable-native-access=ALL-UNNAMED}.
 */
public final class DataPlaneBench {

    private static final String NAMESPACE = "bench";
    /** Prints each transfer's CPU by thread (-Dbench.verbose=true). */
    private static final boolean VERBOSE = Boolean.getBoolean("bench.verbose");

    private final Layout layout;
    private final int records;
    private final int receivers;
    private final int concurrency;
    private final int rounds;
    private final NettyDataPlane.Backend backend;
    private final int threads;
    private final boolean storeHop;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment source;
    private final MemorySegment fetched;
    private final long recordBytes;
    private final OutgoingImage[] images;
    private final RecordSpec[] specs;

    private DataPlaneBench(Map<String, String> options) {
        this.layout = Layout.preset(options.getOrDefault("layout", "deepseek-tp4"));
        this.receivers = Integer.parseInt(options.getOrDefault("receivers", "2"));
        this.concurrency = Integer.parseInt(options.getOrDefault("concurrency", "32"));
        this.rounds = Integer.parseInt(options.getOrDefault("rounds", "5"));
        this.backend = NettyDataPlane.Backend.valueOf(options.getOrDefault("backend",
                NettyDataPlane.Backend.best().name()).toUpperCase(Locale.ROOT));
        this.threads = Integer.parseInt(options.getOrDefault("threads", "2"));
        this.storeHop = options.containsKey("store-hop");
        this.recordBytes = layout.recordBytes(true);
        long volume = Long.parseLong(options.getOrDefault("mib", "1024")) << 20;
        this.records = (int) Math.max(concurrency, volume / recordBytes);
        // The host's side: every record of a round in slots of its own (each pushed once a round, as each record is
        // retired once) and one fetch target per record in flight.
        int distinct = records;
        this.source = arena.allocate(distinct * layout.slotBytes() * layout.slotsPerRecord(true), 4096);
        for (long i = 0; i + 8 <= source.byteSize(); i += 8) {
            source.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
        }
        this.fetched = arena.allocate(concurrency * layout.slotBytes() * layout.slotsPerRecord(true), 4096);
        this.images = new OutgoingImage[distinct];
        this.specs = new RecordSpec[distinct];
        for (int r = 0; r < distinct; r++) {
            PieceShares shares = shares(source, r);
            specs[r] = new RecordSpec(new RecordKey(NAMESPACE, 1000 + r), null, true);
            RecordImage.Frame frame = RecordImage.frame(specs[r], layout, shares);
            images[r] = new OutgoingImage(layout, true, frame.headerBlock(), frame.footerBlock(), shares);
        }
    }

    /** The shares of record {@code r} of {@code memory}: its slots side by side. */
    private PieceShares shares(MemorySegment memory, int r) {
        long base = (long) r * layout.slotBytes() * layout.slotsPerRecord(true);
        return (piece, rank) -> memory.asSlice(base + piece * layout.slotBytes() + (long) rank * layout.pageBytes(),
                layout.pageBytes());
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + a);
            }
            String name = a.substring(2);
            if (name.equals("store-hop")) {
                options.put(name, "true");
            } else {
                options.put(name, args[++i]);
            }
        }
        new DataPlaneBench(options).run();
    }

    private void run() throws Exception {
        List<SlotStore> stores = new ArrayList<>();
        List<NettyDataPlane> servers = new ArrayList<>();
        for (int i = 0; i < receivers; i++) {
            SlotStore store = new SlotStore(storeHop);
            stores.add(store);
            servers.add(NettyDataPlane.serve("127.0.0.1", 0, null, backend, NettyDataPlane.DEFAULT_SILENCE, threads,
                    store));
        }
        List<DataAddress> to = servers.stream().map(DataPlane::address).toList();
        try (NettyDataPlane host = NettyDataPlane.client(backend, NettyDataPlane.DEFAULT_SILENCE, threads)) {
            System.out.printf(Locale.ROOT, "layout %s, record %.2f MiB, %d records a round (%.2f GB), %d receiver(s),"
                    + " %d in flight, %s, %d data threads each side, store answers %s%n", layout.name(),
                    recordBytes / 1048576.0, records, records * (double) recordBytes / 1e9, receivers, concurrency,
                    backend.name().toLowerCase(Locale.ROOT), threads, storeHop ? "through an executor" : "at once");
            Map<String, List<double[]>> results = new LinkedHashMap<>();
            for (int round = 0; round <= rounds; round++) {
                boolean warmUp = round == 0;
                long bytes = records * recordBytes;
                List<Map.Entry<String, Supplier<Long>>> modes = new ArrayList<>();
                // the stores forget every record between rounds, so each round pushes them afresh
                modes.add(Map.entry("raw write", () -> raw(host, to, bytes, true)));
                modes.add(Map.entry("image push", () -> push(host, to)));
                modes.add(Map.entry("raw read", () -> raw(host, to, bytes, false)));
                modes.add(Map.entry("image fetch", () -> fetch(host, to)));
                if (round % 2 == 1) { // alternate which goes first
                    modes = List.of(modes.get(1), modes.get(0), modes.get(3), modes.get(2));
                }
                for (var mode : modes) {
                    if (VERBOSE) {
                        System.out.println(mode.getKey() + (warmUp ? " (warm-up)" : ""));
                    }
                    double[] figures = measure(mode.getValue(), bytes);
                    if (!warmUp) {
                        results.computeIfAbsent(mode.getKey(), k -> new ArrayList<>()).add(figures);
                    }
                }
                stores.forEach(SlotStore::forget);
            }
            System.out.println("mode          GB/s   CPU-s/GB process   CPU-s/GB data threads   (medians of "
                    + rounds + " rounds)");
            for (var e : results.entrySet()) {
                System.out.printf(Locale.ROOT, "%-12s %6.2f   %8.3f           %8.3f%n", e.getKey(),
                        median(e.getValue(), 0), median(e.getValue(), 1), median(e.getValue(), 2));
            }
            System.out.printf(Locale.ROOT, "ratios: push/raw write GB/s %.2f, CPU %.2f; fetch/raw read GB/s %.2f,"
                    + " CPU %.2f%n", median(results.get("image push"), 0) / median(results.get("raw write"), 0),
                    median(results.get("image push"), 1) / median(results.get("raw write"), 1),
                    median(results.get("image fetch"), 0) / median(results.get("raw read"), 0),
                    median(results.get("image fetch"), 1) / median(results.get("raw read"), 1));
        } finally {
            servers.forEach(NettyDataPlane::close);
            stores.forEach(SlotStore::close);
            arena.close();
        }
    }

    private static double median(List<double[]> figures, int column) {
        double[] values = figures.stream().mapToDouble(f -> f[column]).sorted().toArray();
        return values[values.length / 2];
    }

    /** Runs {@code transfer} and returns GB/s, process CPU-s per GB and data-thread CPU-s per GB. */
    private static double[] measure(Supplier<Long> transfer, long bytes) {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        Map<String, Long> before = VERBOSE ? threadCpu() : Map.of();
        long data0 = dataThreadsCpu();
        long t0 = System.nanoTime();
        long moved = transfer.get();
        long wall = System.nanoTime() - t0;
        long cpu = os.getProcessCpuTime() - cpu0;
        long data = dataThreadsCpu() - data0;
        if (VERBOSE) {
            Map<String, Long> after = threadCpu();
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "  %.3f s process:", cpu / 1e9));
            after.forEach((name, t) -> {
                long d = t - before.getOrDefault(name, 0L);
                if (d > cpu / 50) {
                    line.append(String.format(Locale.ROOT, " %s %.3f", name, d / 1e9));
                }
            });
            System.out.println(line);
        }
        if (moved != bytes) {
            throw new IllegalStateException("moved " + moved + " bytes of " + bytes);
        }
        double gb = bytes / 1e9;
        return new double[] {bytes / (double) wall, cpu / 1e9 / gb, data / 1e9 / gb};
    }

    private static long dataThreadsCpu() {
        return threadCpu().entrySet().stream().filter(e -> e.getKey().startsWith("selene-data"))
                .mapToLong(Map.Entry::getValue).sum();
    }

    /** CPU nanoseconds of every live Java thread, summed by name with its digits left out. */
    private static Map<String, Long> threadCpu() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, Long> byName = new java.util.TreeMap<>();
        for (var info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null) {
                long t = threads.getThreadCpuTime(info.getThreadId());
                byName.merge(info.getThreadName().replaceAll("[0-9]+", "#"), Math.max(0, t), Long::sum);
            }
        }
        return byName;
    }

    /** The same bytes raw: written to every receiver at once, or read a share from each. */
    private long raw(DataPlane host, List<DataAddress> to, long bytes, boolean write) {
        int chunk = (int) layout.slotBytes();
        List<CompletableFuture<Long>> all = new ArrayList<>();
        long share = bytes / to.size();
        for (int i = 0; i < to.size(); i++) {
            long b = write ? bytes : i == to.size() - 1 ? bytes - share * (to.size() - 1) : share;
            all.add(write ? host.rawPush(to.get(i), b, chunk).done() : host.rawFetch(to.get(i), b, chunk).done());
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        return bytes;
    }

    /** Every record of the round pushed to every receiver, {@code concurrency} records in flight. */
    private long push(DataPlane host, List<DataAddress> to) {
        Semaphore inFlight = new Semaphore(concurrency);
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (int r = 0; r < records; r++) {
            inFlight.acquireUninterruptibly();
            OutgoingImage image = images[r % images.length];
            RecordSpec spec = specs[r % specs.length];
            List<CompletableFuture<?>> replicas = new ArrayList<>();
            for (DataAddress a : to) {
                replicas.add(host.push(a, spec, image).done());
            }
            CompletableFuture<Void> both = CompletableFuture.allOf(replicas.toArray(CompletableFuture[]::new));
            both.whenComplete((v, e) -> inFlight.release());
            all.add(both);
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        return records * recordBytes;
    }

    /** Every record of the round fetched from one receiver, spread evenly, into the fetch targets. */
    private long fetch(DataPlane host, List<DataAddress> to) {
        Semaphore inFlight = new Semaphore(concurrency);
        java.util.concurrent.ArrayBlockingQueue<Integer> targets = new java.util.concurrent.ArrayBlockingQueue<>(
                concurrency);
        for (int i = 0; i < concurrency; i++) {
            targets.add(i);
        }
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (int r = 0; r < records; r++) {
            inFlight.acquireUninterruptibly();
            int target = targets.remove();
            RecordKey key = specs[r % specs.length].key();
            CompletableFuture<ReceivedImage> done = host.fetch(to.get(r % to.size()), key, layout,
                    shares(fetched, target)).done();
            done.whenComplete((v, e) -> {
                targets.add(target);
                inFlight.release();
            });
            all.add(done);
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        return records * recordBytes;
    }

    /**
     * A receiver's store: record memory preallocated as a ring of record-sized slot runs, a landed record kept
     * (by key) where it landed, served from there.
     */
    private final class SlotStore implements RecordService {
        private final Arena memory = Arena.ofShared();
        private final MemorySegment slots;
        private final int capacity;
        private final Map<RecordKey, Kept> kept = new ConcurrentHashMap<>();
        private final Executor answers;
        private final ExecutorService hop;
        private int next;

        private record Kept(int at, ReceivedImage image) {
        }

        SlotStore(boolean hop) {
            this.capacity = specs.length;
            this.slots = memory.allocate(capacity * layout.slotBytes() * layout.slotsPerRecord(true), 4096);
            this.hop = hop ? Executors.newSingleThreadExecutor() : null;
            this.answers = hop ? this.hop : Runnable::run;
        }

        @Override
        public void offered(RecordSpec spec, long imageBytes, Admission admission) {
            answers.execute(() -> {
                if (kept.containsKey(spec.key())) {
                    admission.alreadyHeld();
                    return;
                }
                int at;
                synchronized (this) {
                    at = next;
                    next = (next + 1) % capacity;
                }
                admission.land(layout, shares(slots, at), (image, failure) -> {
                    if (failure == null) {
                        kept.put(spec.key(), new Kept(at, image));
                    }
                });
            });
        }

        @Override
        public void requested(RecordKey key, Delivery delivery) {
            answers.execute(() -> {
                Kept k = kept.get(key);
                if (k == null) {
                    delivery.notHeld("not held");
                    return;
                }
                delivery.send(new OutgoingImage(layout, true, k.image().headerBlock(), k.image().footerBlock(),
                        shares(slots, k.at())), (bytes, failure) -> { });
            });
        }

        void forget() {
            kept.clear();
        }

        void close() {
            if (hop != null) {
                hop.shutdown();
                try {
                    hop.awaitTermination(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            memory.close();
        }
    }
}
