package dev.selene.node.replay;

import dev.selene.actors.api.LookupResult;
import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.PublishResult;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.RestoreResult;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DevicePlacement;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Replays a Mooncake-format trace through a node as a serving engine would: requests arrive at their
 * timestamp divided by the speed-up (or as fast as possible); for each, look up the longest cached prefix,
 * restore it to the (simulated) device and count its tokens as served from cache; then publish the request's
 * records from the match on (a row at the last block, and optionally every few blocks), which answers {@code Present} for records already
 * held. Requests run one after another, so the hit ratio does not depend on timing.
 *
 * <p>Each block of {@link MooncakeTrace#BLOCK_TOKENS} tokens is one record, so the layout's records must cover
 * 512 tokens (deepseek-tp4 and qwen-tp1 do). The snapshots' bytes are not filled: the replay measures hits and
 * restore decisions, not content (the burst checks bytes).
 */
public final class TraceReplay {

    /** Namespace of the replay's records. */
    public static final String NAMESPACE = "replay";

    /** How long the engine keeps a publication's GPU snapshot. */
    static final Duration SNAPSHOT_LIFETIME = Duration.ofSeconds(2);

    /** A restore is never refused for time: the replay's recompute estimate. */
    static final Duration RECOMPUTE_ESTIMATE = Duration.ofHours(1);

    private final SeleneCache cache;
    private final DeviceCopier copier;
    private final Layout layout;
    private final double speedup;
    private final int rowInterval;
    private final PrintStream progress;
    private final Publisher publisher;
    private final Scratch snapshots;
    private final Scratch targets;

    /**
     * A replay through {@code cache} on {@code copier} (the device the cache is registered with), pacing arrivals
     * by {@code speedup} (≤ 0: as fast as possible), with progress on {@code progress} (null: none).
     */
    public TraceReplay(SeleneCache cache, DeviceCopier copier, double speedup, PrintStream progress) {
        this(cache, copier, speedup, 0, progress);
    }

    /**
     * A replay as above whose engine also publishes a row at every {@code rowInterval}-th block ({@code 0}: only
     * at each request's last block).
     */
    public TraceReplay(SeleneCache cache, DeviceCopier copier, double speedup, int rowInterval,
                       PrintStream progress) {
        if (rowInterval < 0) {
            throw new IllegalArgumentException("--row-interval " + rowInterval + " is invalid; allowed: 0 (rows at "
                    + "each request's last block only) or a positive number of blocks");
        }
        this.rowInterval = rowInterval;
        this.cache = cache;
        this.copier = copier;
        this.layout = cache.layout();
        if (layout.tokensPerRecord() != MooncakeTrace.BLOCK_TOKENS) {
            throw new IllegalArgumentException("--layout '" + layout.name() + "' has records of "
                    + layout.tokensPerRecord() + " tokens; allowed: a layout whose records cover "
                    + MooncakeTrace.BLOCK_TOKENS + " tokens (deepseek-tp4, qwen-tp1)");
        }
        this.speedup = speedup;
        this.progress = progress;
        this.publisher = new Publisher(cache);
        this.snapshots = new Scratch(copier);
        this.targets = new Scratch(copier);
    }

    /** Replays {@code trace} and returns the report. */
    public ReplayReport run(List<TraceRequest> trace) {
        ReplayReport report = new ReplayReport();
        report.layout = layout.name();
        report.warmBytes = cache.config().warmBytes();
        report.speedup = speedup;
        report.rowInterval = rowInterval;
        report.ceiling = TraceCeiling.of(trace, rowInterval);
        long start = System.nanoTime();
        long lastProgress = start;
        try {
            for (int i = 0; i < trace.size(); i++) {
                TraceRequest r = trace.get(i);
                if (speedup > 0) {
                    long due = start + (long) (TimeUnit.MILLISECONDS.toNanos(r.timestampMillis()) / speedup);
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    } else {
                        report.maxLagSeconds = Math.max(report.maxLagSeconds, -wait / 1e9);
                    }
                }
                replayOne(r, report);
                long now = System.nanoTime();
                if (progress != null && now - lastProgress > TimeUnit.SECONDS.toNanos(2)) {
                    progress.printf(Locale.ROOT, "replay: %d/%d requests, hit ratio %.1f%%%n", i + 1, trace.size(),
                            100 * report.hitRatio());
                    lastProgress = now;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("replay interrupted", e);
        } finally {
            snapshots.close();
            targets.close();
        }
        report.seconds = (System.nanoTime() - start) / 1e9;
        return report;
    }

    private void replayOne(TraceRequest r, ReplayReport report) {
        long[] chain = ChainHash.chain(r.hashIds());
        report.requests++;
        report.tokensRequested += r.inputLength();
        report.blocksReferenced += chain.length;
        int restored = restore(chain, report);
        if (restored > 0) {
            report.requestsHit++;
            report.blocksRestored += restored;
            report.tokensFromCache += Math.min((long) restored * MooncakeTrace.BLOCK_TOKENS, r.inputLength());
        } else {
            report.requestsRecomputed++;
        }
        publish(chain, restored, report);
    }

    /** Looks up and restores the match; returns the records restored (0: recompute). */
    private int restore(long[] chain, ReplayReport report) {
        if (chain.length == 0) {
            return 0;
        }
        report.lookups++;
        LookupResult match = cache.lookup(NAMESPACE, chain).toCompletableFuture().join();
        int depth = match.depth();
        if (depth == 0) {
            return 0;
        }
        long bytes = 0;
        for (LookupResult.Located l : match.records()) {
            bytes += DevicePlacement.bytesNeeded(layout, l.hasRow());
        }
        long base = targets.ensure(bytes);
        List<DevicePlacement> places = new ArrayList<>(depth);
        long offset = 0;
        for (LookupResult.Located l : match.records()) {
            places.add(DevicePlacement.contiguous(layout, base + offset, l.hasRow()));
            offset += DevicePlacement.bytesNeeded(layout, l.hasRow());
        }
        RestoreResult result = cache.restore(NAMESPACE, Arrays.copyOf(chain, depth), places, RECOMPUTE_ESTIMATE)
                .toCompletableFuture().join();
        switch (result.outcome()) {
            case RESTORED -> {
                report.restoresFromMemory += result.fromMemory() > 0 ? 1 : 0;
                report.restoresFromDisk += result.fromDisk() > 0 ? 1 : 0;
                report.restoresFromPool += result.fromPool() > 0 ? 1 : 0;
                return result.records();
            }
            case REFUSED -> report.restoresRefused++;
            case FAILED -> report.restoresFailed++;
            case MISS, DISABLED -> {
                // evicted between lookup and restore, or the cache is off: recompute
            }
        }
        return 0;
    }

    /** Publishes chain[from..] (a row at the last block) and waits for every answer. */
    private void publish(long[] chain, int from, ReplayReport report) {
        if (from >= chain.length) {
            return;
        }
        long bytes = 0;
        for (int i = from; i < chain.length; i++) {
            bytes += DevicePlacement.bytesNeeded(layout, hasRow(i, chain.length, rowInterval));
        }
        long base = snapshots.ensure(bytes);
        SnapshotLease lease = SnapshotLease.until(System.nanoTime() + SNAPSHOT_LIFETIME.toNanos());
        List<CompletableFuture<PublishOutcome>> all = new ArrayList<>(chain.length - from);
        long offset = 0;
        for (int i = from; i < chain.length; i++) {
            boolean hasRow = hasRow(i, chain.length, rowInterval);
            RecordKey parent = i == 0 ? null : new RecordKey(NAMESPACE, chain[i - 1]);
            RecordSpec spec = new RecordSpec(new RecordKey(NAMESPACE, chain[i]), parent, hasRow);
            all.add(publisher.publish(spec, DevicePlacement.contiguous(layout, base + offset, hasRow), lease)
                    .toCompletableFuture());
            offset += DevicePlacement.bytesNeeded(layout, hasRow);
        }
        for (CompletableFuture<PublishOutcome> f : all) {
            PublishOutcome o = f.join();
            report.published++;
            if (o.abandoned()) {
                report.abandoned++;
            } else if (o.result() instanceof PublishResult.Stored) {
                report.stored++;
            } else if (o.result() instanceof PublishResult.Present) {
                report.present++;
            } else {
                report.otherPublishResults++;
            }
        }
    }

    /** Whether block {@code i} of a request of {@code n} blocks is published with a row. */
    static boolean hasRow(int i, int n, int rowInterval) {
        return i == n - 1 || (rowInterval > 0 && (i + 1) % rowInterval == 0);
    }

    /** One device region reused across requests, grown when a request needs more. */
    private static final class Scratch implements AutoCloseable {
        private final DeviceCopier copier;
        private long base;
        private long size;

        Scratch(DeviceCopier copier) {
            this.copier = copier;
        }

        long ensure(long bytes) {
            if (bytes > size) {
                if (base != 0) {
                    copier.freeDevice(base);
                    base = 0;
                }
                long grown = Math.max(bytes, size + size / 2);
                base = copier.allocateDevice(grown);
                size = grown;
            }
            return base;
        }

        @Override
        public void close() {
            if (base != 0) {
                copier.freeDevice(base);
                base = 0;
                size = 0;
            }
        }
    }
}
