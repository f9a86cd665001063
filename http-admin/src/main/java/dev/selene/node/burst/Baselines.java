package dev.selene.node.burst;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.cache.HostCache;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.layout.Layout;
import dev.selene.node.workload.Conversations;
import dev.selene.node.workload.Progress;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DevicePlacement;

import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The raw baselines of one burst, each the plain path under a tier measured in the same run on the same machine: the
 * copy of the same snapshots into the node's own slots, O_DIRECT writes and reads beside the disk tier's directory,
 * and transfers over the pool's data plane to its managers. Each runs in two halves, the first after the prefill and
 * before the burst, the second once the probe has run, so that neither side alone gets the machine's better or worse
 * moment (the disk's speed drifts by up to 2x within a minute on a shared machine).
 */
final class Baselines {

    /** The most bytes the raw O_DIRECT baseline writes (it reports a rate, so a sample suffices). */
    static final long RAW_DISK_MAX_BYTES = 1L << 30;

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

    private final BurstSettings settings;
    private final SeleneCache cache;
    private final DeviceCopier copier;
    private final Conversations conversations;
    private final BurstReport report;
    private final CpuAccounting cpu;
    private final long imageBytes;
    private final PrintStream progressOut;
    private final RawPublishCopy raw;
    private final AtomicReference<String> step = new AtomicReference<>("raw copy: first half");
    private List<DevicePlacement> snapshots;
    private List<Boolean> hasRow;
    private RawDisk.Result rawDisk = RawDisk.Result.NONE;
    private long fileBytes;
    private PoolRaw rawPool;
    private final Settle settle;

    /** Waits, before a measured window, for what the run asks (the compilers going quiet after a warm-up). */
    @FunctionalInterface
    interface Settle {
        void before(BurstReport report) throws InterruptedException;
    }

    /**
     * The baselines of a burst of {@code conversations} on {@code cache}, whose records' pool images come to
     * {@code imageBytes} (0 without a pool); made once the node has started, so that the raw copy finds its slots.
     */
    Baselines(BurstSettings settings, SeleneCache cache, DeviceCopier copier, Conversations conversations,
              BurstReport report, CpuAccounting cpu, long imageBytes, PrintStream progressOut, Settle settle) {
        this.settings = settings;
        this.settle = settle;
        this.cache = cache;
        this.copier = copier;
        this.conversations = conversations;
        this.report = report;
        this.cpu = cpu;
        this.imageBytes = imageBytes;
        this.progressOut = progressOut;
        this.raw = RawPublishCopy.into(WatchedCopier.nodeSlots(copier),
                settings.device().equals("cuda") ? 1 : settings.copyThreads());
    }

    /**
     * The first halves, once the snapshots are prefilled: they show as their own phase (they take seconds, and the
     * burst's publications start only once its line is printed).
     */
    void firstHalves() throws Exception {
        Layout layout = settings.layout();
        snapshots = conversations.snapshots();
        hasRow = conversations.hasRows();
        Progress baseline = progress();
        raw.warmUp(copier, snapshots, hasRow, RAW_COPY_WARMUP_CALLS, RAW_COPY_WARMUP_NANOS,
                RAW_COPY_WARMUP_SCRATCH_BYTES);
        raw.copy(copier, snapshots, hasRow, 0, snapshots.size() / 2);
        // The first half of the raw O_DIRECT baseline runs when the burst must spill (its record files outgrow the
        // warm tier); the second writes as much again, or all when the first did not run.
        if (settings.diskDir() != null) {
            report.rawDiskReadThreads = readThreads(cache);
            long files = conversations.sumOverRecords(spec -> RecordHeader.current(spec, layout).fileLength());
            fileBytes = files / Math.max(1, snapshots.size());
            long mustSpill = Math.min(RAW_DISK_MAX_BYTES, Math.max(0, files - settings.warmBytes()));
            if (mustSpill > 0) {
                step.set("raw O_DIRECT: first half");
                rawDisk = rawDisk(mustSpill / 2);
            }
        }
        if (settings.poolManagers() > 0) {
            // The raw pool baseline moves the bytes of every record's image (what the burst retires when nothing is
            // abandoned).
            step.set("raw pool transfers: first half");
            rawPool = PoolRaw.await(cache.system(), settings.poolManagers(), (int) layout.slotBytes());
            settle.before(report);
            CpuAccounting.PoolWindow raw1 = cpu.poolWindow();
            rawPool.measure(imageBytes / 2);
            raw1.end(report, true, "raw, first half", imageBytes);
        }
        step.set("first halves done; the second halves run after the probe");
        baseline.stop();
    }

    /**
     * The second halves, once the probe has run and the report has the node's disk counters: the raw copy, once the
     * node has written everything it holds (it overwrites the records' memory, and the node is closed next); then
     * {@code freeSnapshots}; then the pool's and the disk's.
     */
    void secondHalves(Runnable freeSnapshots) throws Exception {
        step.set("draining the node first");
        Progress secondHalves = progress();
        if (settings.diskDir() != null || settings.poolManagers() > 0) {
            // Nothing dirty left and no write in flight: nothing reads the slots after this but the node's close.
            cache.drain(BurstRun.DRAIN_TIMEOUT).toCompletableFuture().join();
        }
        step.set("raw copy: second half");
        raw.copy(copier, snapshots, hasRow, snapshots.size() / 2, snapshots.size());
        report.rawCopyGbps = raw.gbps();
        report.rawCopyCpuGbps = raw.cpuGbps();
        report.rawCopyPassGbps = raw.passes().stream().mapToDouble(RawPublishCopy.Pass::gbps).toArray();
        report.rawCopyPassCpuGbps = raw.passes().stream().mapToDouble(RawPublishCopy.Pass::cpuGbps).toArray();
        report.rawWholeCopyGbps = raw.copyWhole(copier, snapshots, hasRow);
        freeSnapshots.run();
        if (rawPool != null) {
            report.poolCounters(cache.counters(), settings.poolManagers());
            dev.selene.actors.pool.PoolSecurity security = dev.selene.actors.pool.PoolSecurity.from(
                    cache.system().settings().config());
            report.poolSecurity = security.tls() ? "tls (" + security.engine().label() + ")" : "plain text (loopback)";
            step.set("raw pool transfers: second half");
            settle.before(report);
            CpuAccounting.PoolWindow raw2 = cpu.poolWindow();
            try {
                rawPool.measure(imageBytes - imageBytes / 2);
                raw2.end(report, true, "raw, second half", imageBytes);
            } catch (PoolRaw.RoundFailedException e) {
                // A manager that went away during the run (stopped, killed, downed) fails the raw round, not the
                // report: the raw figures are then the first half's, and the report says so.
                report.rawPoolError = "the second half failed, so the raw figures are the first half's: "
                        + e.getMessage();
            }
            report.rawPoolWriteGbps = rawPool.writeGbps();
            report.rawPoolReadGbps = rawPool.readGbps();
            report.rawPoolBytes = rawPool.bytesMoved();
            rawPool.close();
        }
        if (settings.diskDir() != null && report.diskWriteBytes > 0 && report.rawDiskError == null) {
            long second = rawDisk.bytes() > 0 ? rawDisk.bytes() : Math.min(report.diskWriteBytes, RAW_DISK_MAX_BYTES);
            step.set("raw O_DIRECT: second half");
            rawDisk = rawDisk(second);
            report.rawDiskWriteGbps = rawDisk.writeGbps();
            report.rawDiskReadGbps = rawDisk.readGbps();
        }
        step.set("second halves done");
        secondHalves.stop();
    }

    private Progress progress() {
        return new Progress(settings.progress() ? progressOut : null, "baseline", step::get);
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
     * What the raw O_DIRECT baseline measured so far plus a measurement of about {@code bytes} in files of the
     * records' mean length, beside the tier's directory, never inside it; a baseline that fails (a full disk) is a
     * line of the report, not the loss of it.
     */
    private RawDisk.Result rawDisk(long bytes) throws InterruptedException {
        try {
            return rawDisk.plus(RawDisk.measure(RawDisk.beside(settings.diskDir()), bytes, fileBytes,
                    HostCache.SPILL_IN_FLIGHT_CAP, report.rawDiskReadThreads));
        } catch (RawDisk.BaselineException e) {
            report.rawDiskError = e.getMessage();
            return rawDisk;
        }
    }
}
