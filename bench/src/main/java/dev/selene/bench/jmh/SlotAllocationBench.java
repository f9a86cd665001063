package dev.selene.bench.jmh;

import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotList;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Allocating and releasing one record's slots in one call each, on a pool of about 10k slots: 8 slots is a
 * page-only DeepSeek-TP4 record, 31 one with its row.
 *
 * <ul>
 *   <li>{@code allocateRelease}: an otherwise idle pool, so the same stack top is taken and returned.</li>
 *   <li>{@code churn}: a pool kept about 80% full by a ring of resident records; every operation releases the
 *       oldest record and allocates a new one, so the free stack is scattered as in a running tier.</li>
 *   <li>{@code baselineArrayFill}: the raw work underneath, a fresh {@code int[slots]} filled from a stack,
 *       for the ratio that workloads and benchmarks asks for.</li>
 * </ul>
 * Single-threaded by design: the accounting is confined to one actor.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--sun-misc-unsafe-memory-access=allow"})
@State(Scope.Thread)
public class SlotAllocationBench {

    private static final int POOL_SLOTS = 10_240;
    private static final int INTAKE_SLOTS = 1_024;

    @Param({"8", "31"})
    public int slots;

    private SlotAccounting idle;
    private SlotAccounting busy;
    private SlotList[] ring;
    private int oldest;
    private int[] stack;

    @Setup(Level.Trial)
    public void setUp() {
        idle = new SlotAccounting(POOL_SLOTS, INTAKE_SLOTS);
        busy = new SlotAccounting(POOL_SLOTS, INTAKE_SLOTS);
        ring = new SlotList[(POOL_SLOTS * 8 / 10) / slots];
        Random random = new Random(42);
        for (int i = 0; i < ring.length; i++) {
            ring[i] = busy.allocate(slots);
        }
        // Scatter the free stack: release and re-take records in random order.
        for (int i = 0; i < ring.length * 4; i++) {
            int j = random.nextInt(ring.length);
            busy.release(ring[j]);
            ring[j] = busy.allocate(slots);
        }
        stack = new int[POOL_SLOTS];
        for (int i = 0; i < POOL_SLOTS; i++) {
            stack[i] = i;
        }
    }

    @Benchmark
    public SlotList allocateRelease() {
        SlotList list = idle.allocate(slots);
        idle.release(list);
        return list;
    }

    @Benchmark
    public SlotList churn() {
        busy.release(ring[oldest]);
        SlotList list = busy.allocate(slots);
        ring[oldest] = list;
        if (++oldest == ring.length) {
            oldest = 0;
        }
        return list;
    }

    @Benchmark
    public int[] baselineArrayFill() {
        int[] taken = new int[slots];
        int top = POOL_SLOTS;
        for (int i = 0; i < slots; i++) {
            taken[i] = stack[--top];
        }
        return taken;
    }
}
