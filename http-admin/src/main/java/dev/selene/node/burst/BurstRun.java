package dev.selene.node.burst;

import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.cache.HostCache;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DeviceCopiers;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.host.HostMemory;
import dev.selene.transport.pool.RecordImage;


import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * Replays the production burst: conversations publish their turns' records from GPU snapshots that
 * live only {@code snapshotMillis}, many at once; then a probe restores every conversation to the device and
 * verifies every byte against the keyed content (byte-identical restores).
 *
 * <p>The snapshots are written to device memory before the clock starts (that is the GPU's prefill, not the
 * cache's work), so the timed burst measures publication alone, against a plain copy of the same bytes with
 * the same number of copy threads measured in the same run.
 */
public final class BurstRun {

    /** The most bytes the raw O_DIRECT baseline writes (it reports a rate, so a sample suffices). */
    static final long RAW_DISK_MAX_BYTES = 1L << 30;

    /** How long the drain that follows a pool burst may take. */
    static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(5);

    /** Namespace of the burst's records. */
    public static final String NAMESPACE = "burst";

    private LongSupplier peerCpuNanos = () -> 0;
    private LongSupplier peerDataCpuNanos = () -> 0;
    private ThreadCpuBreakdown breakdown = new ThreadCpuBreakdown(List::of);
    private final BurstSettings settings;
    private final PrintStream progressOut;
    private final Function<DeviceCopier, SeleneCache> nodeFactory;
    private final Function<DeviceCopier, SeleneCache> warmUpFactory;
    private final Runnable afterWarmUp;

    /** A run that starts its own memory-only node. */
    public BurstRun(BurstSettings settings, PrintStream progressOut) {
        this(settings, progressOut, copier -> SeleneCache.start(CacheConfig.memoryOnly(settings.layout(),
                settings.warmBytes()).withConcurrency(settings.concurrency()), copier));
    }

    /** A run against nodes made by {@code nodeFactory} (other presets start nodes with other tiers). */
    public BurstRun(BurstSettings settings, PrintStream progressOut, Function<DeviceCopier, SeleneCache> nodeFactory) {
        this(settings, progressOut, nodeFactory, null, () -> { });
    }

    private BurstRun(BurstSettings settings, PrintStream progressOut, Function<DeviceCopier, SeleneCache> nodeFactory,
                     Function<DeviceCopier, SeleneCache> warmUpFactory, Runnable afterWarmUp) {
        this.settings = settings;
        this.progressOut = progressOut;
        this.nodeFactory = nodeFactory;
        this.warmUpFactory = warmUpFactory;
        this.afterWarmUp = afterWarmUp;
    }

    /**
     * Counts the CPU time of the processes at the other end of the pool (the managers) into the pool's CPU figures;
     * returns this run.
     */
    public BurstRun withPeerCpu(LongSupplier peerCpuNanos, LongSupplier peerDataCpuNanos,
                                java.util.function.Supplier<List<Long>> peerPids) {
        this.peerCpuNanos = peerCpuNanos;
        this.peerDataCpuNanos = peerDataCpuNanos;
        this.breakdown = new ThreadCpuBreakdown(peerPids);
        return this;
    }

    /**
     * This run with its warm-up on nodes made by {@code factory} (the preset's tiers, elsewhere than the measured
     * node's directory), and {@code cleanup} run once the warm-up has ended.
     */
    public BurstRun withWarmUpNodes(Function<DeviceCopier, SeleneCache> factory, Runnable cleanup) {
        return new BurstRun(settings, progressOut, nodeFactory, factory, cleanup);
    }

    /** The scratch directory of a disk preset's warm-up node: beside the tier's, on the same filesystem. */
    public static Path warmUpDirectory(Path tierDir) {
        Path abs = tierDir.toAbsolutePath().normalize();
        return abs.resolveSibling(abs.getFileName() + ".warmup");
    }

    /** Deletes a warm-up directory and everything in it (best effort; a later run tries again). */
    public static void deleteWarmUpDirectory(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | java.io.UncheckedIOException ignored) {
            // best effort: the next run removes what is left
        }
    }

    /** Conversations of the untimed warm-up run that precedes a measured run. */
    public static final int WARMUP_CONVERSATIONS = 24;

    /**
     * Conversations of the untimed protocol warm-up: tiny records (the {@code small} layout) on a memory-only node,
     * enough publications and restores (six per conversation) for the JIT's optimising compiler to have compiled the
     * per-record path before the measured run, which a warm-up of full-size records cannot give in seconds.
     */
    static final int PROTOCOL_WARMUP_CONVERSATIONS = 1024;
    /**
     * Device copies the raw copy baseline makes, untimed, before its first pass: past the optimising compiler's
     * threshold (about 10,000 calls), so that the first pass is not timed while its copy path runs interpreted.
     */
    static final int RAW_COPY_WARMUP_CALLS = 30_000;
    /**
     * How long at least the raw copy baseline copies, untimed, right before its first pass: the first second or so
     * of a sustained copy ran slower than what followed, and a plain copy preceded by this much copying ran alike in
     * both halves (the figures are in docs/benchmarks.md, "Figures behind constants in the code").
     */
    static final long RAW_COPY_WARMUP_NANOS = TimeUnit.MILLISECONDS.toNanos(1_500);
    /** The scratch memory that warm-up copies into (cycled), large enough not to stay in the caches. */
    static final long RAW_COPY_WARMUP_SCRATCH_BYTES = 256L << 20;

    /**
     * Runs the burst and the probe and returns the report. When {@code warmUp}, a small untimed burst on a
     * separate node first brings the JIT up to speed, so that on a small machine the measured run does not
     * share its cores with the compiler.
     */
    public BurstReport run(boolean warmUp) throws Exception {
        if (warmUp) {
            Layout tiny = Layout.small();
            BurstSettings protocol = new BurstSettings(tiny, PROTOCOL_WARMUP_CONVERSATIONS, settings.concurrency(),
                    settings.recordsPerConversation() * tiny.tokensPerRecord(), settings.turns(), 0,
                    settings.snapshotMillis(), settings.device(), settings.copyThreads(), 0, settings.seed() + 2,
                    false, false, null);
            // A warm tier that holds every tiny record, so the warm-up publishes and restores without evicting.
            new BurstRun(protocol.withWarmBytes(protocol.slotsNeeded() * tiny.slotBytes() * 11 / 10), progressOut)
                    .run(false);
            int conversations = Math.min(WARMUP_CONVERSATIONS, settings.conversations());
            long warm = settings.warmBytes() / settings.conversations() * conversations;
            BurstSettings small = new BurstSettings(settings.layout(), conversations, settings.concurrency(),
                    settings.tokens(), settings.turns(), warm, settings.snapshotMillis(), settings.device(), settings.copyThreads(),
                    settings.bandwidthCap(), settings.seed() + 1, false, false, null);
            // On the preset's tiers (a pool, a disk in a scratch directory), so that the compiler has seen every
            // path the measured run takes, the managers' included.
            try {
                (warmUpFactory != null ? new BurstRun(small, progressOut, warmUpFactory)
                        : new BurstRun(small, progressOut)).run(false);
            } finally {
                afterWarmUp.run();
            }
        }
        return run();
    }

    /** Runs the burst and the probe (and, when asked, a restart and a second probe) and returns the report. */
    public BurstReport run() throws Exception {
        BurstReport report = newReport();
        try (DeviceCopier device = copier()) {
            // Watched, so that the raw copy can find the node's slots: it writes the memory the publications write.
            WatchedCopier copier = new WatchedCopier(device);
            report.device = copier.name();
            List<Conversation> conversations = conversations();
            SeleneCache cache = nodeFactory.apply(copier);
            try {
                measure(cache, copier, conversations, report, true);
                if (settings.restart()) {
                    long stop = System.nanoTime();
                    SeleneCache old = cache;
                    cache = null;
                    old.close();
                    cache = nodeFactory.apply(copier);
                    report.restartSeconds = (System.nanoTime() - stop) / 1e9;
                    report.afterRestart = probe(cache, copier, conversations, "restart");
                }
            } finally {
                freeSnapshots(copier, conversations);
                if (cache != null) {
                    cache.close();
                }
            }
        }
        return report;
    }

    /**
     * Runs the burst and the probe against a node the caller started on {@code copier} and keeps running (a served
     * node under load): no warm-up, no restart, no raw baselines; the node's records stay when it returns.
     */
    public BurstReport runOn(SeleneCache cache, DeviceCopier copier) throws Exception {
        if (settings.restart() || settings.poolManagers() > 0) {
            throw new IllegalArgumentException("a burst on a running node neither restarts it nor measures a pool");
        }
        BurstReport report = newReport();
        report.device = copier.name();
        List<Conversation> conversations = conversations();
        try {
            measure(cache, copier, conversations, report, false);
        } finally {
            freeSnapshots(copier, conversations);
        }
        return report;
    }

    private BurstReport newReport() {
        BurstReport report = new BurstReport();
        report.layout = settings.layout().name();
        report.warmBytes = settings.warmBytes();
        return report;
    }

    /** {@code each} summed over every record of the burst. */
    private static long sumOverRecords(List<Conversation> conversations, ToLongFunction<RecordSpec> each) {
        long sum = 0;
        for (Conversation c : conversations) {
            for (RecordSpec spec : c.specs) {
                sum += each.applyAsLong(spec);
            }
        }
        return sum;
    }

    /**
     * The prefill, the timed burst and the probe, with the raw baselines around them when {@code baselines} (the raw
     * copy of the same snapshots into the node's own slots runs in two halves: the first before the burst, into slots
     * still free; the second once the probe has run and the node has written everything it holds, since it
     * overwrites the records' memory and the node is closed next).
     */
    private void measure(SeleneCache cache, DeviceCopier copier, List<Conversation> conversations, BurstReport report,
                         boolean baselines) throws Exception {
        Layout layout = settings.layout();
        CacheStatus before = cache.status().toCompletableFuture().join();
        report.durableTier = !cache.config().memoryOnly();
        report.totalSlots = before.totalSlots();
        report.intakeSlots = before.intakeSlots();
        RawPublishCopy raw = baselines
                ? RawPublishCopy.into(nodeSlots(copier), settings.device().equals("cuda") ? 1 : settings.copyThreads())
                : null;
        prefill(copier, conversations);
        List<DevicePlacement> snapshots = new ArrayList<>();
        List<Boolean> hasRow = new ArrayList<>();
        for (Conversation c : conversations) {
            for (int i = 0; i < c.specs.length; i++) {
                snapshots.add(c.snapshots[i]);
                hasRow.add(c.specs[i].hasRow());
            }
        }
        // The first halves of the raw baselines show as their own phase: they take seconds, and the burst's
        // publications start only once its line is printed.
        AtomicReference<String> baselineStep = new AtomicReference<>("raw copy: first half");
        Progress baseline = baselines ? progress("baseline", baselineStep::get) : null;
        if (baselines) {
            raw.warmUp(copier, snapshots, hasRow, RAW_COPY_WARMUP_CALLS, RAW_COPY_WARMUP_NANOS,
                    RAW_COPY_WARMUP_SCRATCH_BYTES);
            raw.copy(copier, snapshots, hasRow, 0, snapshots.size() / 2);
        }
        // The raw O_DIRECT baseline, like the raw copy, runs in two halves around the burst and probe: the disk's
        // speed drifts by up to 2x within a minute on a shared machine. The first half runs when the burst must
        // spill (its record files outgrow the warm tier); the second writes as much again, or all when the first
        // did not run.
        RawDisk.Result rawDisk = RawDisk.Result.NONE;
        long fileBytes = 0;
        if (baselines && settings.diskDir() != null) {
            report.rawDiskReadThreads = readThreads(cache);
            long files = sumOverRecords(conversations, spec -> RecordHeader.current(spec, layout).fileLength());
            fileBytes = files / Math.max(1, snapshots.size());
            long mustSpill = Math.min(RAW_DISK_MAX_BYTES, Math.max(0, files - settings.warmBytes()));
            if (mustSpill > 0) {
                baselineStep.set("raw O_DIRECT: first half");
                rawDisk = rawDisk(report, mustSpill / 2, fileBytes, rawDisk);
            }
        }
        PoolRaw rawPool = null;
        long imageBytes = 0;
        if (baselines && settings.poolManagers() > 0) {
            // The raw baseline moves the bytes of every record's image (what the burst retires when nothing
            // is abandoned) in two halves around the burst and probe, so that neither side alone gets the
            // machine's better or worse moment.
            for (Conversation c : conversations) {
                for (RecordSpec spec : c.specs) {
                    imageBytes += RecordImage.imageBytes(layout, spec.hasRow());
                }
            }
            baselineStep.set("raw pool transfers: first half");
            rawPool = PoolRaw.await(cache.system(), settings.poolManagers(), (int) layout.slotBytes());
            PoolCpuWindow raw1 = new PoolCpuWindow();
            rawPool.measure(imageBytes / 2);
            raw1.end(report, true, "raw, first half", imageBytes);
        }
        if (baseline != null) {
            baselineStep.set("first halves done; the second halves run after the probe");
            baseline.stop();
        }
        SimulatedDevice sim = simulated(copier);
        long busyBefore = sim != null ? sim.busyNanosToHost() : 0;
        PoolCpuWindow window = new PoolCpuWindow();
        burst(cache, conversations, report);
        if (sim != null) {
            report.copyEngineBusySeconds = (sim.busyNanosToHost() - busyBefore) / 1e9;
        }
        if (rawPool != null) {
            retireTheRest(cache, report);
            window.end(report, false, "burst and retirement", imageBytes);
        }
        window = new PoolCpuWindow();
        report.probe = probe(cache, copier, conversations, "probe");
        if (rawPool != null) {
            window.end(report, false, "probe (restores)", imageBytes);
        }
        report.diskCounters(cache.counters());
        Progress secondHalves = null;
        if (baselines) {
            baselineStep.set("draining the node first");
            secondHalves = progress("baseline", baselineStep::get);
            if (settings.diskDir() != null || settings.poolManagers() > 0) {
                // Nothing dirty left and no write in flight: nothing reads the slots after this but the node's close.
                cache.drain(DRAIN_TIMEOUT).toCompletableFuture().join();
            }
            baselineStep.set("raw copy: second half");
            raw.copy(copier, snapshots, hasRow, snapshots.size() / 2, snapshots.size());
            report.rawCopyGbps = raw.gbps();
            report.rawCopyCpuGbps = raw.cpuGbps();
            report.rawCopyPassGbps = raw.passes().stream().mapToDouble(RawPublishCopy.Pass::gbps).toArray();
            report.rawCopyPassCpuGbps = raw.passes().stream().mapToDouble(RawPublishCopy.Pass::cpuGbps).toArray();
            report.rawWholeCopyGbps = raw.copyWhole(copier, snapshots, hasRow);
        }
        freeSnapshots(copier, conversations);
        if (rawPool != null) {
            report.poolCounters(cache.counters(), settings.poolManagers());
            dev.selene.actors.pool.PoolSecurity security = dev.selene.actors.pool.PoolSecurity.from(
                    cache.system().settings().config());
            report.poolSecurity = security.tls() ? "tls (" + security.engine().label() + ")" : "plain text (loopback)";
            baselineStep.set("raw pool transfers: second half");
            PoolCpuWindow raw2 = new PoolCpuWindow();
            rawPool.measure(imageBytes - imageBytes / 2);
            raw2.end(report, true, "raw, second half", imageBytes);
            report.rawPoolWriteGbps = rawPool.writeGbps();
            report.rawPoolReadGbps = rawPool.readGbps();
            report.rawPoolBytes = rawPool.bytesMoved();
            rawPool.close();
        }
        if (baselines && settings.diskDir() != null && report.diskWriteBytes > 0 && report.rawDiskError == null) {
            long second = rawDisk.bytes() > 0 ? rawDisk.bytes() : Math.min(report.diskWriteBytes, RAW_DISK_MAX_BYTES);
            baselineStep.set("raw O_DIRECT: second half");
            rawDisk = rawDisk(report, second, fileBytes, rawDisk);
            report.rawDiskWriteGbps = rawDisk.writeGbps();
            report.rawDiskReadGbps = rawDisk.readGbps();
        }
        if (secondHalves != null) {
            baselineStep.set("second halves done");
            secondHalves.stop();
        }
    }

    /** The host slots the node registered with the device (the node has started by now). */
    private static HostMemory nodeSlots(DeviceCopier copier) {
        HostMemory slots = copier instanceof WatchedCopier w ? w.registered() : null;
        if (slots == null || !slots.isOpen()) {
            throw new IllegalStateException("the node registered no host slots with the device; no raw copy baseline");
        }
        return slots;
    }

    /** The simulated device under {@code copier}, or null on a GPU. */
    private static SimulatedDevice simulated(DeviceCopier copier) {
        DeviceCopier device = copier instanceof WatchedCopier w ? w.delegate() : copier;
        return device instanceof SimulatedDevice sim ? sim : null;
    }

    /**
     * Readers of the raw O_DIRECT read baseline: as many as the node's blocking dispatcher, where a restore's reads
     * run, has threads; the spill scheduler's cap when it is not a fixed pool.
     */
    private static int readThreads(SeleneCache cache) {
        String path = HostCache.BLOCKING_DISPATCHER + ".thread-pool-executor.fixed-pool-size";
        var config = cache.system().settings().config();
        return config.hasPath(path) ? config.getInt(path) : HostCache.SPILL_IN_FLIGHT_CAP;
    }

    /**
     * {@code sofar} plus a raw O_DIRECT measurement of about {@code bytes} in files of {@code fileBytes}, beside the
     * tier's directory, never inside it; a baseline that fails (a full disk) is a line of the report, not the loss of
     * it.
     */
    private RawDisk.Result rawDisk(BurstReport report, long bytes, long fileBytes, RawDisk.Result sofar)
            throws InterruptedException {
        try {
            return sofar.plus(RawDisk.measure(RawDisk.beside(settings.diskDir()), bytes, fileBytes,
                    HostCache.SPILL_IN_FLIGHT_CAP, report.rawDiskReadThreads));
        } catch (RawDisk.BaselineException e) {
            report.rawDiskError = e.getMessage();
            return sofar;
        }
    }

    private DeviceCopier copier() {
        if (settings.device().equals("cuda")) {
            return DeviceCopiers.select("cuda");
        }
        if (settings.device().equals("auto")) {
            DeviceCopier selected = DeviceCopiers.select("auto");
            if (!(selected instanceof SimulatedDevice)) {
                return selected;
            }
            selected.close();
        }
        return SimulatedDevice.create(settings.copyThreads(), settings.bandwidthCap());
    }

    /** One conversation: its chain of keys and, while its snapshot lives, the device placement of each record. */
    private static final class Conversation {
        final long[] chain;
        final RecordSpec[] specs;
        final long[] snapshotBase;
        final DevicePlacement[] snapshots;

        Conversation(long[] chain, RecordSpec[] specs) {
            this.chain = chain;
            this.specs = specs;
            this.snapshotBase = new long[chain.length];
            this.snapshots = new DevicePlacement[chain.length];
        }
    }

    private List<Conversation> conversations() {
        int n = settings.recordsPerConversation();
        List<Conversation> out = new ArrayList<>(settings.conversations());
        for (int c = 0; c < settings.conversations(); c++) {
            long[] blocks = new long[n];
            for (int i = 0; i < n; i++) {
                blocks[i] = ChainHash.mix(settings.seed() * 0x1000193L + ((long) c << 20) + i);
            }
            long[] chain = ChainHash.chain(blocks);
            RecordSpec[] specs = new RecordSpec[n];
            for (int i = 0; i < n; i++) {
                RecordKey parent = i == 0 ? null : new RecordKey(NAMESPACE, chain[i - 1]);
                specs[i] = new RecordSpec(new RecordKey(NAMESPACE, chain[i]), parent, settings.hasRow(i));
            }
            out.add(new Conversation(chain, specs));
        }
        return out;
    }

    /** Writes every record's keyed content into device memory, as the GPU's prefill would. */
    private void prefill(DeviceCopier copier, List<Conversation> conversations) throws InterruptedException {
        Layout layout = settings.layout();
        AtomicLong done = new AtomicLong();
        Progress progress = progress("prefill", () -> done.get() + "/" + conversations.size() + " conversations");
        try (ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Runtime.getRuntime().availableProcessors()))) {
            for (Conversation conv : conversations) {
                pool.submit(() -> {
                    for (int i = 0; i < conv.specs.length; i++) {
                        boolean hasRow = conv.specs[i].hasRow();
                        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(layout, hasRow));
                        conv.snapshotBase[i] = base;
                        conv.snapshots[i] = DevicePlacement.contiguous(layout, base, hasRow);
                        KeyedContent.fillRecord(copier, layout, conv.snapshots[i], conv.specs[i].key(), hasRow);
                    }
                    done.incrementAndGet();
                });
            }
        } finally {
            progress.stop();
        }
    }

    private void burst(SeleneCache cache, List<Conversation> conversations, BurstReport report)
            throws InterruptedException {
        Publisher publisher = new Publisher(cache);
        Semaphore inFlight = new Semaphore(settings.concurrency());
        ConcurrentLinkedQueue<PublishOutcome> outcomes = new ConcurrentLinkedQueue<>();
        AtomicLong published = new AtomicLong();
        List<CompletableFuture<Void>> all = new ArrayList<>(conversations.size());
        Progress progress = progress("burst", () -> published.get() + " records published, "
                + outcomes.stream().filter(PublishOutcome::abandoned).count() + " abandoned");
        long start = System.nanoTime();
        long cpuStart = processCpuNanos();
        long copyCpuStart = threadCpuNanos(COPY_THREAD_PREFIX);
        try {
            for (Conversation conv : conversations) {
                inFlight.acquire();
                CompletableFuture<Void> done = publishTurns(publisher, conv, 0, outcomes, published);
                done.whenComplete((v, e) -> inFlight.release());
                all.add(done);
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        } finally {
            progress.stop();
        }
        long elapsed = System.nanoTime() - start;
        report.burstCpuCores = (processCpuNanos() - cpuStart) / (double) elapsed;
        report.copyThreadCpuNanos = threadCpuNanos(COPY_THREAD_PREFIX) - copyCpuStart;
        report.burstCpuNanos = processCpuNanos() - cpuStart;
        long[] latencies = new long[outcomes.size()];
        int k = 0;
        for (PublishOutcome o : outcomes) {
            latencies[k++] = o.latencyNanos();
            report.published++;
            report.retries += o.attempts() - 1;
            if (o.abandoned()) {
                report.abandoned.merge(o.abandonReason(), 1L, Long::sum);
                continue;
            }
            switch (o.result()) {
                case PublishResult.Stored s -> {
                    report.stored++;
                    report.bytesPublished += s.bytes();
                }
                case PublishResult.Present p -> report.present++;
                case PublishResult.Oversize o2 -> report.oversize++;
                case PublishResult.Failed f -> report.failed++;
                case PublishResult.Disabled d -> report.disabled++;
                case PublishResult.Retry r -> throw new IllegalStateException("retry outcome not abandoned: " + r);
                case PublishResult.Abandoned a -> throw new IllegalStateException("abandoned outcome not counted: " + a);
            }
        }
        Arrays.sort(latencies);
        report.publishP50Nanos = percentile(latencies, 0.50);
        report.publishP99Nanos = percentile(latencies, 0.99);
        report.burstSeconds = elapsed / 1e9;
        report.publishGbps = report.bytesPublished / (double) elapsed;
    }

    /** Publishes the records of turn {@code turn} at once, then the next turn, as a conversation grows. */
    private CompletableFuture<Void> publishTurns(Publisher publisher, Conversation conv, int first,
                                                 ConcurrentLinkedQueue<PublishOutcome> outcomes, AtomicLong published) {
        if (first >= conv.specs.length) {
            return CompletableFuture.completedFuture(null);
        }
        int end = first;
        while (end < conv.specs.length && !conv.specs[end].hasRow()) {
            end++;
        }
        end = Math.min(end + 1, conv.specs.length);
        SnapshotLease lease = SnapshotLease.until(System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(settings.snapshotMillis()));
        List<CompletableFuture<PublishOutcome>> turn = new ArrayList<>();
        for (int i = first; i < end; i++) {
            turn.add(publisher.publish(conv.specs[i], conv.snapshots[i], lease).toCompletableFuture()
                    .whenComplete((o, e) -> {
                        if (o != null) {
                            outcomes.add(o);
                            published.incrementAndGet();
                        }
                    }));
        }
        int next = end;
        return CompletableFuture.allOf(turn.toArray(CompletableFuture[]::new))
                .thenCompose(v -> publishTurns(publisher, conv, next, outcomes, published));
    }

    /**
     * Retires what is still dirty after the burst (a drain), so that every record is in the pool; the retire phase
     * is the burst and this drain together.
     */
    private void retireTheRest(SeleneCache cache, BurstReport report) throws InterruptedException {
        long start = System.nanoTime();
        Progress progress = progress("retire", () -> cache.counters().get("pool.retired") + " records retired");
        try {
            DrainReport drained = cache.drain(DRAIN_TIMEOUT).toCompletableFuture().join();
            report.poolDrainSkipped = drained.skipped();
        } finally {
            progress.stop();
        }
        report.retireSeconds = report.burstSeconds + (System.nanoTime() - start) / 1e9;
    }

    private void freeSnapshots(DeviceCopier copier, List<Conversation> conversations) {
        for (Conversation conv : conversations) {
            for (int i = 0; i < conv.snapshots.length; i++) {
                if (conv.snapshots[i] != null) {
                    copier.freeDevice(conv.snapshotBase[i]);
                    conv.snapshots[i] = null;
                }
            }
        }
    }

    /**
     * Restores every conversation into fresh device memory and checks every byte. The device memory of every
     * conversation is allocated before the first restore starts, so that the timed restores do not share the
     * machine with the page faults of memory just mapped.
     */
    private BurstReport.Probe probe(SeleneCache cache, DeviceCopier copier, List<Conversation> conversations,
                                    String phase) throws InterruptedException {
        Layout layout = settings.layout();
        BurstReport.Probe result = new BurstReport.Probe();
        AtomicLong probed = new AtomicLong();
        Progress progress = progress(phase, () -> probed.get() + "/" + conversations.size() + " conversations");
        List<Probed> fromPool = new ArrayList<>();
        // One set of restore targets per restore in flight, taken and given back: the probe's device memory is what
        // the concurrency restores at once, not the whole burst again beside its snapshots.
        int sets = Math.min(settings.concurrency(), conversations.size());
        List<long[]> bases = new ArrayList<>(sets);
        BlockingQueue<long[]> freeTargets = new ArrayBlockingQueue<>(sets);
        long start = 0;
        try (ExecutorService pool = Executors.newFixedThreadPool(settings.concurrency())) {
            for (int s = 0; s < sets; s++) {
                long[] b = new long[settings.recordsPerConversation()];
                bases.add(b);
                for (int i = 0; i < b.length; i++) {
                    b[i] = copier.allocateDevice(DevicePlacement.bytesNeeded(layout, settings.hasRow(i)));
                }
                freeTargets.add(b);
            }
            start = System.nanoTime();
            List<Future<Probed>> results = new ArrayList<>();
            for (Conversation conv : conversations) {
                results.add(pool.submit(() -> {
                    long[] b = freeTargets.take();
                    try {
                        Probed r = probeOne(cache, copier, layout, conv, b);
                        probed.incrementAndGet();
                        return r;
                    } finally {
                        freeTargets.add(b);
                    }
                }));
            }
            for (var f : results) {
                Probed r = f.get();
                if (r.depth() == conversations.getFirst().chain.length) {
                    result.full++;
                } else if (r.depth() > 0) {
                    result.partial++;
                } else {
                    result.recomputed++;
                }
                result.verifiedRecords += r.verified();
                result.mismatchedRecords += r.mismatched();
                result.bytes += r.bytes();
                result.fromDisk += r.fromDisk();
                result.fromPool += r.fromPool();
                if (r.fromPool() > 0) {
                    fromPool.add(r);
                }
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("probe failed: " + e.getCause(), e.getCause());
        } finally {
            progress.stop();
            for (long[] b : bases) {
                for (long base : b) {
                    if (base != 0) {
                        copier.freeDevice(base);
                    }
                }
            }
        }
        result.seconds = (System.nanoTime() - start) / 1e9;
        result.poolBusyNanos = busyNanos(fromPool);
        return result;
    }

    /**
     * What the probe of one conversation found: the depth restored, records verified and mismatched, bytes
     * restored, records from disk and from the pool, and when its restore started and was answered (verification
     * not included).
     */
    private record Probed(int depth, long verified, long mismatched, long bytes, int fromDisk, int fromPool,
                          long startNanos, long endNanos) {
    }

    /** Restores {@code conv} into the device memory at {@code bases} (one allocation per record) and checks it. */
    private static Probed probeOne(SeleneCache cache, DeviceCopier copier, Layout layout, Conversation conv,
                                   long[] bases) {
        List<DevicePlacement> targets = new ArrayList<>(conv.specs.length);
        for (int i = 0; i < conv.specs.length; i++) {
            targets.add(DevicePlacement.contiguous(layout, bases[i], conv.specs[i].hasRow()));
        }
        long start = System.nanoTime();
        RestoreResult r = cache.restore(NAMESPACE, conv.chain, targets, Duration.ofHours(1))
                .toCompletableFuture().join();
        long end = System.nanoTime();
        if (r.outcome() != RestoreResult.Outcome.RESTORED) {
            return new Probed(0, 0, 0, 0, 0, 0, start, end);
        }
        long ok = 0;
        long bad = 0;
        for (int i = 0; i < r.records(); i++) {
            if (KeyedContent.verifyRecord(copier, layout, targets.get(i), conv.specs[i].key(),
                    conv.specs[i].hasRow())) {
                ok++;
            } else {
                bad++;
            }
        }
        return new Probed(r.records(), ok, bad, r.bytes(), r.fromDisk(), r.fromPool(), start, end);
    }

    /** The time during which at least one of {@code restores} was in flight. */
    private static long busyNanos(List<Probed> restores) {
        List<Probed> sorted = new ArrayList<>(restores);
        sorted.sort(Comparator.comparingLong(Probed::startNanos));
        long total = 0;
        long from = 0;
        long to = Long.MIN_VALUE;
        for (Probed r : sorted) {
            if (r.startNanos() > to) {
                total += to == Long.MIN_VALUE ? 0 : to - from;
                from = r.startNanos();
                to = r.endNanos();
            } else {
                to = Math.max(to, r.endNanos());
            }
        }
        return total + (to == Long.MIN_VALUE ? 0 : to - from);
    }

    /** Name prefix of the node's threads: its actor system's and its data plane's. */
    static final String NODE_THREAD_PREFIX = "selene-";

    /** Name prefix of the simulated device's device-to-host copy threads (the publication's copy). */
    static final String COPY_THREAD_PREFIX = "sim-copy-d2h-";

    /** CPU time so far of the live threads whose name starts with {@code prefix}, summed. */
    private static long threadCpuNanos(String prefix) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds(), 0)) {
            if (t != null && t.getThreadName().startsWith(prefix)) {
                sum += Math.max(0, mx.getThreadCpuTime(t.getThreadId()));
            }
        }
        return sum;
    }

    private static long processCpuNanos() {
        return ProcessCpu.nanos();
    }

    /**
     * CPU of both ends of the pool: on this side the node's own threads (its actors, its cluster transport, its
     * data plane: every thread named {@value #NODE_THREAD_PREFIX}), not the burst's threads that stand in for the
     * serving engine (publishing, probing, verifying) nor the simulated device's; on the other side the manager
     * processes whole.
     */
    private long bothEndsCpuNanos() {
        return threadCpuNanos(NODE_THREAD_PREFIX) + peerCpuNanos.getAsLong();
    }

    /**
     * CPU of the data planes' threads at both ends (the working threads of the pool's transfers, as the copy threads
     * are of the copies): this JVM's threads named {@value #DATA_THREAD_PREFIX} (the node's data plane and the raw
     * baseline's), and the managers'.
     */
    private long dataPlanesCpuNanos() {
        return threadCpuNanos(DATA_THREAD_PREFIX) + peerDataCpuNanos.getAsLong();
    }

    static final String DATA_THREAD_PREFIX = "selene-data";

    /** One measured window of the pool's CPU, from its start: both ends' whole CPU and the data planes' share. */
    private final class PoolCpuWindow {
        private final long all = bothEndsCpuNanos();
        private final long data = dataPlanesCpuNanos();

        PoolCpuWindow() {
            breakdown.begin();
        }

        /**
         * Adds the window's CPU to the pool's figures ({@code raw}: to the raw baseline's) and, when asked for, prints
         * its breakdown per GB of {@code recordBytes}.
         */
        void end(BurstReport report, boolean raw, String name, long recordBytes) {
            long allUsed = bothEndsCpuNanos() - all;
            long dataUsed = dataPlanesCpuNanos() - data;
            if (raw) {
                report.rawPoolCpuNanos += allUsed;
                report.rawPoolDataCpuNanos += dataUsed;
            } else {
                report.poolCpuNanos += allUsed;
                report.poolDataCpuNanos += dataUsed;
            }
            breakdown.end(name, recordBytes / 1e9);
        }
    }

    private static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int i = (int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1);
        return sorted[Math.max(0, i)];
    }

    private Progress progress(String phase, java.util.function.Supplier<String> line) {
        return new Progress(settings.progress() ? progressOut : null, phase, line);
    }

    /** A line on standard error refreshed while a phase runs. */
    private static final class Progress {
        private final Thread thread;
        private final PrintStream out;
        private final String phase;
        private final java.util.function.Supplier<String> line;
        private final long start = System.nanoTime();

        Progress(PrintStream out, String phase, java.util.function.Supplier<String> line) {
            this.out = out;
            this.phase = phase;
            this.line = line;
            if (out == null) {
                thread = null;
                return;
            }
            thread = Thread.ofPlatform().daemon().name("burst-progress").start(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        Thread.sleep(500);
                        print(false);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }

        private void print(boolean last) {
            String text = String.format(Locale.ROOT, "%-8s %6.1fs  %s", phase, (System.nanoTime() - start) / 1e9,
                    line.get());
            if (System.console() != null) {
                out.print("\r" + text + (last ? System.lineSeparator() : ""));
            } else if (last) {
                out.println(text);
            }
            out.flush();
        }

        void stop() {
            if (thread != null) {
                thread.interrupt();
                try {
                    thread.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                print(true);
            }
        }
    }
}
