package dev.selene.node.burst;

import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.host.HostMemory;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.ToLongFunction;

/**
 * The raw path under publication, measured in the same run: the burst's own snapshots copied share by share (the
 * same pieces the node copies) into host slots of the same layout, with the device's own synchronous copy
 * ({@link DeviceCopier#readDevice}: a plain memory copy on the simulated device, a driver copy on a GPU) and as many
 * threads as the node's copy engine has.
 *
 * <p>In the burst it writes <em>the node's own slots</em> ({@link #into}), the records laid out in order from slot 0,
 * which is where a fresh node's slot pool puts them: on the virtual machines this is measured on, two mappings made
 * seconds apart can differ several times over in how fast they take writes (the guest's pages lie on host memory of
 * different speed; the figures are in docs/benchmarks.md), so a baseline written into memory of its own compared the
 * memories, not the paths. It runs as two halves
 * around the timed burst, the first half of the records before it (into slots that are still free) and the second
 * half once the node is done with its slots (after the probe and a drain), so that neither side alone gets the
 * machine's better or worse moment; together the halves move every byte the burst publishes, and every slot the
 * burst fills is written by the baseline once.
 */
final class RawPublishCopy {

    /** One pass: the bytes copied, its wall-clock time and the CPU time of its copying threads. */
    record Pass(long bytes, long wallNanos, long cpuNanos) {

        double gbps() {
            return wallNanos > 0 ? bytes / (double) wallNanos : 0;
        }

        /** Bytes per CPU-second of the copying threads, in GB/s. */
        double cpuGbps() {
            return cpuNanos > 0 ? bytes / (double) cpuNanos : 0;
        }
    }

    private final Layout layout;
    private final int threads;
    private final HostMemory target;
    private final List<Pass> passes = new ArrayList<>();

    private RawPublishCopy(Layout layout, int threads, HostMemory target) {
        this.layout = layout;
        this.threads = threads;
        this.target = target;
    }

    /**
     * Copies into {@code slots}, a mapping its owner (the node) maps and unmaps, with {@code threads} threads: records
     * that do not fit after the last slot start again at slot 0, as a node's slots are reused when the burst
     * outgrows them.
     */
    static RawPublishCopy into(HostMemory slots, int threads) {
        return new RawPublishCopy(slots.layout(), Math.max(1, threads), slots);
    }

    /**
     * Copies every share of records {@code [from, to)} of {@code snapshots} (records with a row where
     * {@code hasRow}) from the device into their own target slots, the records dealt round-robin to the threads,
     * and keeps the pass.
     */
    Pass copy(DeviceCopier copier, List<DevicePlacement> snapshots, List<Boolean> hasRow, int from, int to)
            throws InterruptedException {
        int[] firstSlot = firstSlots(hasRow);
        long[] bytes = new long[threads];
        long[] cpu = new long[threads];
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<?>> fs = new ArrayList<>(threads);
            long start = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                fs.add(pool.submit(() -> {
                    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
                    long cpuStart = mx.getCurrentThreadCpuTime();
                    for (int r = from + thread; r < to; r += threads) {
                        bytes[thread] += copyRecord(copier, snapshots.get(r), hasRow.get(r), firstSlot[r]);
                    }
                    cpu[thread] = mx.getCurrentThreadCpuTime() - cpuStart;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
            long wall = System.nanoTime() - start;
            long totalBytes = 0;
            long totalCpu = 0;
            for (int t = 0; t < threads; t++) {
                totalBytes += bytes[t];
                totalCpu += cpu[t];
            }
            Pass pass = new Pass(totalBytes, wall, totalCpu);
            passes.add(pass);
            return pass;
        } catch (ExecutionException e) {
            throw new IllegalStateException("raw copy failed: " + e.getCause().getMessage(), e.getCause());
        }
    }

    /**
     * Runs the share-by-share copy path, untimed, at least {@code calls} times and for at least {@code nanos}, copying
     * {@code snapshots} round-robin into a scratch mapping of {@code scratchBytes} (not one of the passes, not
     * counted). Two reasons, both measured (docs/benchmarks.md, "Figures behind constants in the code"): the path's
     * first few thousand device copies run interpreted; and on the virtual machines this project is measured on, the
     * first second or so of any sustained copy runs slower than what follows, with or without Selene, unless the
     * machine was copying just before. The node's own copy path is warmed by the burst's warm-up and its burst follows this baseline's
     * first half; this brings the first half to the same state.
     */
    void warmUp(DeviceCopier copier, List<DevicePlacement> snapshots, List<Boolean> hasRow, int calls, long nanos,
                long scratchBytes) {
        int recordSlots = layout.slotsPerRecord(true);
        int scratchSlots = (int) Math.max(recordSlots, scratchBytes / layout.slotBytes());
        try (HostMemory scratch = HostMemory.allocate(layout, scratchSlots)) {
            long end = System.nanoTime() + nanos;
            int done = 0;
            int slot = 0;
            for (int r = 0; done < calls || System.nanoTime() < end; r = (r + 1) % snapshots.size()) {
                int pieces = layout.slotsPerRecord(hasRow.get(r));
                if (slot + pieces > scratchSlots) {
                    slot = 0;
                }
                for (int piece = 0; piece < pieces; piece++) {
                    int len = layout.pieceBytes(piece);
                    for (int rank = 0; rank < layout.ranks(); rank++, done++) {
                        copier.readDevice(snapshots.get(r).address(layout, piece, rank),
                                scratch.share(slot + piece, rank, len));
                    }
                }
                slot += pieces;
            }
        }
    }

    /**
     * Copies each record of {@code snapshots} with one large device copy (its shares lie packed in device memory as
     * they lie in its target slots) and returns GB/s: the copy path's best case, beside the share-by-share passes.
     * Not one of the passes: its target slots were written already.
     */
    double copyWhole(DeviceCopier copier, List<DevicePlacement> snapshots, List<Boolean> hasRow) {
        int[] firstSlot = firstSlots(hasRow);
        long bytes = 0;
        long start = System.nanoTime();
        for (int r = 0; r < snapshots.size(); r++) {
            long length = layout.slotsPerRecord(hasRow.get(r)) * layout.slotBytes();
            copier.readDevice(snapshots.get(r).address(layout, 0, 0),
                    target.segment().asSlice(firstSlot[r] * layout.slotBytes(), length));
            bytes += length;
        }
        return bytes / (double) (System.nanoTime() - start);
    }

    /** The first target slot of each record: in order from slot 0; one that would run past the last starts at 0. */
    private int[] firstSlots(List<Boolean> hasRow) {
        int[] first = new int[hasRow.size()];
        int slot = 0;
        for (int r = 0; r < hasRow.size(); r++) {
            int slots = layout.slotsPerRecord(hasRow.get(r));
            if (slots > target.slotCount()) {
                throw new IllegalArgumentException("a record of " + slots + " slots to copy into "
                        + target.slotCount());
            }
            if (slot + slots > target.slotCount()) {
                slot = 0;
            }
            first[r] = slot;
            slot += slots;
        }
        return first;
    }

    private long copyRecord(DeviceCopier copier, DevicePlacement snapshot, boolean hasRow, int firstSlot) {
        long bytes = 0;
        for (int piece = 0; piece < layout.slotsPerRecord(hasRow); piece++) {
            int len = layout.pieceBytes(piece);
            for (int rank = 0; rank < layout.ranks(); rank++) {
                copier.readDevice(snapshot.address(layout, piece, rank), target.share(firstSlot + piece, rank, len));
                bytes += len;
            }
        }
        return bytes;
    }

    /** The passes so far. */
    List<Pass> passes() {
        return List.copyOf(passes);
    }

    /** GB/s over every pass so far (their bytes over their wall-clock time). */
    double gbps() {
        return bytesPer(Pass::wallNanos);
    }

    /** GB per CPU-second of the copying threads over every pass so far (0 when the device's threads did the work). */
    double cpuGbps() {
        return bytesPer(Pass::cpuNanos);
    }

    private double bytesPer(ToLongFunction<Pass> nanos) {
        long bytes = 0;
        long time = 0;
        for (Pass p : passes) {
            bytes += p.bytes();
            time += nanos.applyAsLong(p);
        }
        return time > 0 ? bytes / (double) time : 0;
    }
}
