package dev.selene.bench.pipeline;

import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.value.PublishResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Publication through the whole actor pipeline against a plain copy of the same bytes, both on warm memory and
 * alternated in one process, so that the ratio shows the pipeline's own cost rather than the machine's memory
 * state (the burst's figure includes first-touch effects on a VM).
 *
 * <p>Each round publishes {@code records} new records (row included) from the same pre-filled snapshots into a
 * memory-only node whose warm tier holds about two rounds, so slots are reused (and the coldest records evicted)
 * from the second round on; then copies the same snapshots, piece by piece, into one warm host region with the
 * same number of threads as the simulated copy engine. Usage: {@code [records] [rounds] [concurrency]}.
 */
public final class PublishPipelineBench {

    private PublishPipelineBench() {
    }

    public static void main(String[] args) throws Exception {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        int concurrency = args.length > 2 ? Integer.parseInt(args[2]) : 32;
        Layout layout = Layout.deepseekTp4();
        long recordBytes = layout.recordBytes(true);
        try (SimulatedDevice copier = SimulatedDevice.create(); Arena arena = Arena.ofShared()) {
            long warm = 2L * records * layout.slotsPerRecord(true) * layout.slotBytes();
            CacheConfig config = CacheConfig.memoryOnly(layout, warm).withConcurrency(concurrency);
            List<DevicePlacement> snapshots = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                long base = copier.allocateDevice(DevicePlacement.bytesNeeded(layout, true));
                DevicePlacement p = DevicePlacement.contiguous(layout, base, true);
                KeyedContent.fillRecord(copier, layout, p, new RecordKey("bench", i), true);
                snapshots.add(p);
            }
            MemorySegment rawTarget = arena.allocate(records * DevicePlacement.bytesNeeded(layout, true), 4096);
            rawTarget.fill((byte) 1);
            double[] pipeline = new double[rounds];
            double[] raw = new double[rounds];
            try (SeleneCache cache = SeleneCache.start(config, copier)) {
                Publisher publisher = new Publisher(cache);
                for (int round = 0; round < rounds; round++) {
                    raw[round] = rawCopy(copier, layout, snapshots, rawTarget);
                    long busy0 = copier.busyNanosToHost();
                    long t0 = System.nanoTime();
                    pipeline[round] = publishRound(publisher, snapshots, round, records, concurrency, recordBytes);
                    long wall = System.nanoTime() - t0;
                    long busy = copier.busyNanosToHost() - busy0;
                    System.out.printf(Locale.ROOT, "round %d: copy engine busy %.0f%% of the round, %.2f GB/s while "
                            + "busy%n", round, 100.0 * busy / wall, records * recordBytes / (double) busy);
                }
            }
            System.out.println("| round | pipeline GB/s | raw copy GB/s | ratio |");
            System.out.println("|---|---|---|---|");
            double[] ratios = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                ratios[r] = pipeline[r] / raw[r];
                System.out.printf(Locale.ROOT, "| %d | %.2f | %.2f | %.2f |%n", r, pipeline[r], raw[r], ratios[r]);
            }
            double[] warmRatios = Arrays.copyOfRange(ratios, Math.min(2, rounds - 1), rounds);
            Arrays.sort(warmRatios);
            System.out.printf(Locale.ROOT, "median ratio after warm-up (rounds 2..%d): %.2f%n", rounds - 1,
                    warmRatios[warmRatios.length / 2]);
        }
    }

    private static double publishRound(Publisher publisher, List<DevicePlacement> snapshots, int round, int records,
                                       int concurrency, long recordBytes) throws InterruptedException {
        Semaphore permits = new Semaphore(concurrency);
        List<CompletableFuture<PublishOutcome>> all = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < records; i++) {
            permits.acquire();
            RecordSpec spec = new RecordSpec(new RecordKey("bench", ((long) round << 32) | i), null, true);
            CompletableFuture<PublishOutcome> f = publisher.publish(spec, snapshots.get(i),
                    SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(30))).toCompletableFuture();
            f.whenComplete((o, e) -> permits.release());
            all.add(f);
        }
        long stored = 0;
        for (CompletableFuture<PublishOutcome> f : all) {
            if (f.join().result() instanceof PublishResult.Stored) {
                stored++;
            }
        }
        long elapsed = System.nanoTime() - start;
        return stored * recordBytes / (double) elapsed;
    }

    /** The same snapshots' shares copied piece by piece into one warm region, on one thread. */
    private static double rawCopy(SimulatedDevice copier, Layout layout, List<DevicePlacement> snapshots,
                                  MemorySegment target) {
        long bytes = 0;
        long start = System.nanoTime();
        long off = 0;
        for (DevicePlacement p : snapshots) {
            for (int piece = 0; piece < layout.slotsPerRecord(true); piece++) {
                int len = layout.pieceBytes(piece);
                for (int rank = 0; rank < layout.ranks(); rank++) {
                    MemorySegment src = MemorySegment.ofAddress(p.address(layout, piece, rank)).reinterpret(len);
                    MemorySegment.copy(src, 0, target, off, len);
                    off += layout.pageBytes();
                    bytes += len;
                }
            }
        }
        return bytes / (double) (System.nanoTime() - start);
    }
}
