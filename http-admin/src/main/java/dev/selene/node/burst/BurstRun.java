package dev.selene.node.burst;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.DrainReport;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.node.workload.Conversations;
import dev.selene.node.workload.Progress;
import dev.selene.node.workload.PublishPhase;
import dev.selene.node.workload.RestoreProbe;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DeviceCopiers;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.pool.RecordImage;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Replays the production burst as a benchmark: the burst workload (conversations publishing their turns' records
 * from GPU snapshots that live only {@code snapshotMillis}, many at once; then a probe that restores every
 * conversation and verifies every byte) on a node of its own, with the measurements around it.
 *
 * <p>The snapshots are written to device memory before the clock starts (that is the GPU's prefill, not the
 * cache's work), so the timed burst measures publication alone, against a plain copy of the same bytes with
 * the same number of copy threads measured in the same run ({@link Baselines}); {@link CpuAccounting} takes the CPU
 * figures, {@link WarmUp} the untimed runs before, and {@link BurstReport} holds what came out.
 */
public final class BurstRun {

    /** How long the drain that follows a pool burst may take. */
    static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(5);

    private final BurstSettings settings;
    private final PrintStream progressOut;
    private final Function<DeviceCopier, SeleneCache> nodeFactory;
    private final Function<DeviceCopier, SeleneCache> warmUpFactory;
    private final Runnable afterWarmUp;
    private CpuAccounting cpu = new CpuAccounting();
    /** Whether each measured window waits for the compilers to go quiet first (after a warm-up). */
    private boolean settle;

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
                                Supplier<List<Long>> peerPids) {
        this.cpu = new CpuAccounting(peerCpuNanos, peerDataCpuNanos, peerPids);
        return this;
    }

    /**
     * This run with its warm-up on nodes made by {@code factory} (the preset's tiers, elsewhere than the measured
     * node's directory), and {@code cleanup} run once the warm-up has ended.
     */
    public BurstRun withWarmUpNodes(Function<DeviceCopier, SeleneCache> factory, Runnable cleanup) {
        BurstRun run = new BurstRun(settings, progressOut, nodeFactory, factory, cleanup);
        run.cpu = cpu;
        return run;
    }

    /**
     * This run with its warm-up on nodes of {@code config} whose disk tier is a scratch directory beside
     * {@code tierDir}, deleted after: a disk preset's node may have no warm tier, and a warm-up node without its
     * disk would have no tier at all.
     */
    public BurstRun withDiskWarmUp(CacheConfig config, Path tierDir) {
        Path dir = WarmUp.directory(tierDir);
        return withWarmUpNodes(copier -> {
            WarmUp.createDirectory(dir);
            return SeleneCache.start(config.withDisk(dir.toString(), config.diskBytes()), copier);
        }, () -> WarmUp.deleteDirectory(dir));
    }

    /**
     * Runs the burst and the probe and returns the report. When {@code warmUp}, small untimed bursts on separate
     * nodes first bring the JIT up to speed, so that on a small machine the measured run does not share its cores
     * with the compiler.
     */
    public BurstReport run(boolean warmUp) throws Exception {
        if (warmUp) {
            WarmUp.run(settings, progressOut, warmUpFactory, afterWarmUp);
        }
        settle = warmUp;
        return run();
    }

    /** Runs the burst and the probe (and, when asked, a restart and a second probe) and returns the report. */
    public BurstReport run() throws Exception {
        BurstReport report = new BurstReport();
        report.layout = settings.layout().name();
        report.warmBytes = settings.warmBytes();
        try (DeviceCopier device = copier()) {
            // Watched, so that the raw copy can find the node's slots: it writes the memory the publications write.
            WatchedCopier copier = new WatchedCopier(device);
            report.device = copier.name();
            Conversations conversations = Conversations.generate(settings.workload());
            SeleneCache cache = nodeFactory.apply(copier);
            try {
                measure(cache, copier, conversations, report);
                if (settings.restart()) {
                    long stop = System.nanoTime();
                    SeleneCache old = cache;
                    cache = null;
                    old.close();
                    cache = nodeFactory.apply(copier);
                    report.restartSeconds = (System.nanoTime() - stop) / 1e9;
                    report.afterRestart = RestoreProbe.run(cache, copier, conversations, progressOut, "restart");
                }
            } finally {
                conversations.freeSnapshots(copier);
                if (cache != null) {
                    cache.close();
                }
            }
        }
        return report;
    }

    /**
     * The prefill, the timed burst and the probe, with the raw baselines around them (the raw copy of the same
     * snapshots into the node's own slots runs in two halves: the first before the burst, into slots still free; the
     * second once the probe has run and the node has written everything it holds, since it overwrites the records'
     * memory and the node is closed next).
     */
    private void measure(SeleneCache cache, DeviceCopier copier, Conversations conversations, BurstReport report)
            throws Exception {
        Layout layout = settings.layout();
        CacheStatus before = cache.status().toCompletableFuture().join();
        report.durableTier = !cache.config().memoryOnly();
        report.totalSlots = before.totalSlots();
        report.intakeSlots = before.intakeSlots();
        boolean pool = settings.poolManagers() > 0;
        long imageBytes = pool ? conversations.sumOverRecords(spec -> RecordImage.imageBytes(layout, spec.hasRow()))
                : 0;
        Baselines baselines = new Baselines(settings, cache, copier, conversations, report, cpu, imageBytes,
                progressOut, this::settle);
        conversations.prefill(copier, progressOut);
        baselines.firstHalves();
        settle(report);
        SimulatedDevice sim = WatchedCopier.simulated(copier);
        long busyBefore = sim != null ? sim.busyNanosToHost() : 0;
        CpuAccounting.PoolWindow window = cpu.poolWindow();
        report.publish = PublishPhase.run(cache, conversations, progressOut, cpu.publications(report));
        if (sim != null) {
            report.copyEngineBusySeconds = (sim.busyNanosToHost() - busyBefore) / 1e9;
        }
        if (pool) {
            retireTheRest(cache, report);
            window.end(report, false, "burst and retirement", imageBytes);
        }
        settle(report);
        window = cpu.poolWindow();
        // With a pool the probe checks its bytes between waves of restores: the pool's read rate, taken over the
        // time a fetch is in flight, is then the pool's alone, as its raw baseline's is (which checks nothing).
        report.probe = RestoreProbe.run(cache, copier, conversations, progressOut, "probe", pool);
        if (pool) {
            window.end(report, false, "probe (restores)", imageBytes);
        }
        report.diskCounters(cache.counters());
        baselines.secondHalves(() -> conversations.freeSnapshots(copier));
    }

    /** After a warm-up, waits for the compilers to go quiet before a measured window (see {@link WarmUp#settle}). */
    void settle(BurstReport report) throws InterruptedException {
        if (settle) {
            report.settleSeconds += WarmUp.settle(cpu::compilerNanos);
        }
    }

    /**
     * Retires what is still dirty after the burst (a drain), so that every record is in the pool; the retire phase
     * is the burst and this drain together.
     */
    private void retireTheRest(SeleneCache cache, BurstReport report) {
        long start = System.nanoTime();
        Progress progress = new Progress(settings.progress() ? progressOut : null, "retire",
                () -> cache.counters().get("pool.retired") + " records retired");
        try {
            DrainReport drained = cache.drain(DRAIN_TIMEOUT).toCompletableFuture().join();
            report.poolDrainSkipped = drained.skipped();
        } finally {
            progress.stop();
        }
        report.retireSeconds = report.publish.seconds() + (System.nanoTime() - start) / 1e9;
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
}
