package dev.selene.bench.pipeline;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;

/**
 * How fast the machine writes memory that has sat idle, with no Selene code involved: maps a source and a target of
 * {@code gib} GiB each (zeroed, so every page is touched once), waits {@code idle-ms}, fills the source, waits
 * {@code pause-ms}, copies for {@code warm-ms} through a 256 MiB scratch pair (none by default), then copies the
 * source's first half into the target's and then its second half, in 64 KiB
 * pieces (the burst's share size for the DeepSeek layout). It shows, with no Selene code involved, what the burst's
 * raw copy baseline ran into while it wrote a mapping of its own (it writes the node's slots now: regions of memory
 * differ in speed on that VM): the first half of two back-to-back copies ran slower than the second, and memory
 * left idle filled slower than memory just mapped. {@code warm-ms} tests whether copying just before changes that.
 * What it measured is in {@code docs/benchmarks.md} ("The raw copy's first half, and the bursts with record actors
 * kept idle").
 *
 * <p>Usage: {@code IdleMemoryProbe [gib] [idle-ms] [pause-ms] [warm-ms]} (defaults 3, 15000, 100, 0).
 */
public final class IdleMemoryProbe {

    private static final long PIECE_BYTES = 64 << 10;
    private static final long WARM_SCRATCH_BYTES = 256L << 20;

    private IdleMemoryProbe() {
    }

    public static void main(String[] args) throws InterruptedException {
        long bytes = (args.length > 0 ? Long.parseLong(args[0]) : 3) << 30;
        long idleMillis = args.length > 1 ? Long.parseLong(args[1]) : 15_000;
        long pauseMillis = args.length > 2 ? Long.parseLong(args[2]) : 100;
        long warmMillis = args.length > 3 ? Long.parseLong(args[3]) : 0;
        long half = bytes / 2 / PIECE_BYTES * PIECE_BYTES;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment target = arena.allocate(2 * half, 4096);
            MemorySegment source = arena.allocate(2 * half, 4096);
            Thread.sleep(idleMillis);
            long t0 = System.nanoTime();
            source.fill((byte) 7);
            print("fill the source after " + idleMillis + " ms idle", 2 * half, System.nanoTime() - t0);
            Thread.sleep(pauseMillis);
            if (warmMillis > 0) {
                MemorySegment from = arena.allocate(WARM_SCRATCH_BYTES, 4096);
                MemorySegment to = arena.allocate(WARM_SCRATCH_BYTES, 4096);
                long moved = 0;
                long start = System.nanoTime();
                while (System.nanoTime() - start < warmMillis * 1_000_000) {
                    for (long offset = 0; offset < WARM_SCRATCH_BYTES; offset += PIECE_BYTES) {
                        MemorySegment.copy(from, offset, to, offset, PIECE_BYTES);
                    }
                    moved += WARM_SCRATCH_BYTES;
                }
                print("copy " + warmMillis + " ms through 256 MiB of scratch", moved, System.nanoTime() - start);
            }
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            for (int h = 0; h < 2; h++) {
                long start = System.nanoTime();
                long cpuStart = mx.getCurrentThreadCpuTime();
                for (long offset = h * half; offset < (h + 1) * half; offset += PIECE_BYTES) {
                    MemorySegment.copy(source, offset, target, offset, PIECE_BYTES);
                }
                long cpu = mx.getCurrentThreadCpuTime() - cpuStart;
                print("copy half " + (h + 1) + " into the target (64 KiB pieces)", half, System.nanoTime() - start);
                print("  the same per CPU-second of the copying thread", half, cpu);
            }
        }
    }

    private static void print(String what, long bytes, long nanos) {
        System.out.printf(Locale.ROOT, "%-48s %6.2f GB/s%n", what, bytes / (double) nanos);
    }
}
