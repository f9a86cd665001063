package dev.selene.node.replay;

import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.LookupResult;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.Tier;
import dev.selene.engine.cost.PrefillCost;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.simulator.ReplaySimulator;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceRequest;
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
 * records from the match on, with rows where the {@link RowRule} puts them; records already held answer
 * {@code Present}. Requests run one after another, so the hit ratio does not depend on timing. The node refuses a
 * restore it estimates slower than recomputing the prefix, by the replay's {@link PrefillCost}.
 *
 * <p>Each block of {@link TraceRequest#BLOCK_TOKENS} tokens is one record, so the layout's records must cover
 * 512 tokens (deepseek-tp4 and qwen-tp1 do). The snapshots' bytes are not filled: the replay measures hits and
 * restore decisions, not content (the burst checks bytes). {@link ReplaySimulator} runs the same steps without
 * actors.
 */
public final class TraceReplay {

    /** Namespace of the replay's records. */
    public static final String NAMESPACE = ReplaySimulator.NAMESPACE;

    /** How long the engine keeps a publication's GPU snapshot. */
    static final Duration SNAPSHOT_LIFETIME = Duration.ofSeconds(2);

    /** How long {@link #settleWrites} waits after one request at most. */
    static final Duration SETTLE_LIMIT = Duration.ofMinutes(1);

    private final SeleneCache cache;
    private final Layout layout;
    private final double speedup;
    private final RowRule rows;
    private final PrefillCost cost;
    private final PrintStream progress;
    private final Publisher publisher;
    private final Scratch snapshots;
    private final Scratch targets;
    private boolean settleWrites;

    /**
     * A replay through {@code cache} on {@code copier} (the device the cache is registered with), pacing arrivals
     * by {@code speedup} (≤ 0: as fast as possible), placing rows by {@code rows}, refusing restores slower than
     * recomputing by {@code cost}, with progress on {@code progress} (null: none).
     */
    public TraceReplay(SeleneCache cache, DeviceCopier copier, double speedup, RowRule rows, PrefillCost cost,
                       PrintStream progress) {
        this.cache = cache;
        this.layout = cache.layout();
        if (layout.tokensPerRecord() != TraceRequest.BLOCK_TOKENS) {
            throw new IllegalArgumentException("--layout '" + layout.name() + "' has records of "
                    + layout.tokensPerRecord() + " tokens; allowed: a layout whose records cover "
                    + TraceRequest.BLOCK_TOKENS + " tokens (deepseek-tp4, qwen-tp1)");
        }
        this.speedup = speedup;
        this.rows = rows;
        this.cost = cost;
        this.progress = progress;
        this.publisher = new Publisher(cache);
        this.snapshots = new Scratch(copier);
        this.targets = new Scratch(copier);
    }

    /**
     * With {@code settle}, after each request wait (a bounded while) until the node's disk writes in flight have
     * finished and stayed so for two status reads, as the simulator's writes finish at once; returns this replay.
     */
    public TraceReplay settleWrites(boolean settle) {
        this.settleWrites = settle;
        return this;
    }

    /** Replays {@code trace} into {@code report}, which already names the run. */
    public ReplayReport run(List<TraceRequest> trace, ReplayReport report) {
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
                if (settleWrites) {
                    settle();
                }
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

    /** Waits until the node has no disk write in flight at two status reads in a row, for at most a minute. */
    private void settle() throws InterruptedException {
        long deadline = System.nanoTime() + SETTLE_LIMIT.toNanos();
        int idle = 0;
        while (idle < 2 && System.nanoTime() < deadline) {
            CacheStatus status = cache.status().toCompletableFuture().join();
            if (status.disk() == null || status.disk().writesInFlight() == 0) {
                idle++;
            } else {
                idle = 0;
                TimeUnit.MILLISECONDS.sleep(1);
            }
        }
    }

    private void replayOne(TraceRequest r, ReplayReport report) {
        long[] chain = ChainHash.chain(r.hashIds());
        report.requests++;
        report.tokensRequested += r.inputLength();
        report.blocksReferenced += chain.length;
        int restored = restore(r, chain, report);
        if (restored > 0) {
            report.requestsHit++;
            report.blocksRestored += restored;
        } else {
            report.requestsRecomputed++;
        }
        publish(r, chain, restored, report);
    }

    /** Looks up and restores the match; returns the records restored (0: recompute). */
    private int restore(TraceRequest r, long[] chain, ReplayReport report) {
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
        long tokens = Math.min((long) depth * TraceRequest.BLOCK_TOKENS, r.inputLength());
        Duration recompute = Duration.ofNanos((long) (cost.recomputeSeconds(tokens) * 1e9));
        RestoreResult result = cache.restore(NAMESPACE, Arrays.copyOf(chain, depth), places, recompute)
                .toCompletableFuture().join();
        switch (result.outcome()) {
            case RESTORED -> {
                countRestored(r, match, result, report);
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

    /** Counts a restore's tokens and bytes by the tier each record came from (as the lookup located them). */
    private void countRestored(TraceRequest r, LookupResult match, RestoreResult result, ReplayReport report) {
        report.restoresFromMemory += result.fromMemory() > 0 ? 1 : 0;
        report.restoresFromDisk += result.fromDisk() > 0 ? 1 : 0;
        report.restoresFromPool += result.fromPool() > 0 ? 1 : 0;
        long tokens = Math.min((long) result.records() * TraceRequest.BLOCK_TOKENS, r.inputLength());
        report.tokensFromCache += tokens;
        for (int i = 0; i < result.records() && i < match.records().size(); i++) {
            LookupResult.Located l = match.records().get(i);
            long blockTokens = Math.max(0, Math.min(TraceRequest.BLOCK_TOKENS,
                    r.inputLength() - (long) i * TraceRequest.BLOCK_TOKENS));
            long recordBytes = layout.recordBytes(l.hasRow());
            if (l.tier() == Tier.MEMORY) {
                report.tokensFromMemory += blockTokens;
                report.bytesFromMemory += recordBytes;
            } else {
                report.tokensFromDisk += blockTokens;
                report.bytesFromDisk += recordBytes;
            }
        }
    }

    /** Publishes the request's records from {@code from} on and waits for every answer. */
    private void publish(TraceRequest r, long[] chain, int from, ReplayReport report) {
        int n = rows.published(r);
        if (from >= n) {
            return;
        }
        long bytes = 0;
        for (int i = from; i < n; i++) {
            bytes += DevicePlacement.bytesNeeded(layout, rows.hasRow(r, i));
        }
        long base = snapshots.ensure(bytes);
        SnapshotLease lease = SnapshotLease.until(System.nanoTime() + SNAPSHOT_LIFETIME.toNanos());
        List<CompletableFuture<PublishOutcome>> all = new ArrayList<>(n - from);
        long offset = 0;
        for (int i = from; i < n; i++) {
            boolean hasRow = rows.hasRow(r, i);
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
