package dev.selene.bench.jmh;

import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The resident index's hot operations on an index of 100k DeepSeek-TP4 records laid out as conversations:
 * chains of 16 records (8192 tokens), every fourth record and each chain's last carrying a row (31 slots), the
 * rest page-only (8 slots); three quarters clean, the rest parked (disk mode).
 *
 * <ul>
 *   <li>{@code get}: look up a resident record (keys visited in a shuffled order, so lookups miss the CPU cache
 *       as a serving workload's would).</li>
 *   <li>{@code insertRemove}: a record arrives under a resident parent and leaves again.</li>
 *   <li>{@code touch}: a use that moves the record to the hot end and refreshes its resident ancestors (8 on
 *       average).</li>
 *   <li>{@code baselineHashMapGet}: a plain {@code HashMap} lookup over the same keys, for the ratio.</li>
 * </ul>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--sun-misc-unsafe-memory-access=allow"})
@State(Scope.Thread)
public class RecordIndexBench {

    static final int RECORDS = 100_000;
    static final int CHAIN = 16;

    private RecordIndex index;
    private RecordKey[] keys;
    private RecordSpec[] fresh;
    private SlotList freshSlots;
    private Map<RecordKey, Object> plain;
    private int next;
    private int nextFresh;
    private long now;

    @Setup(Level.Trial)
    public void setUp() {
        Layout layout = Layout.deepseekTp4();
        Random random = new Random(42);
        index = new RecordIndex(false);
        plain = new HashMap<>();
        keys = new RecordKey[RECORDS];
        int slot = 0;
        for (int i = 0; i < RECORDS; i++) {
            RecordKey parent = i % CHAIN == 0 ? null : keys[i - 1];
            long parentHash = parent == null ? ChainHash.ROOT : parent.hash();
            RecordKey key = new RecordKey("deepseek", ChainHash.next(parentHash, random.nextLong()));
            boolean hasRow = i % 4 == 3 || i % CHAIN == CHAIN - 1;
            int count = layout.slotsPerRecord(hasRow);
            int[] s = new int[count];
            for (int p = 0; p < count; p++) {
                s[p] = slot++;
            }
            index.insert(new RecordSpec(key, parent, hasRow), SlotList.of(s), random.nextInt(4) != 0, i);
            plain.put(key, key);
            keys[i] = key;
        }
        shuffle(keys, random);
        fresh = new RecordSpec[1 << 12];
        for (int i = 0; i < fresh.length; i++) {
            RecordKey parent = keys[random.nextInt(RECORDS)];
            fresh[i] = new RecordSpec(parent.child(random.nextLong()), parent, true);
        }
        int[] s = new int[layout.slotsPerRecord(true)];
        for (int p = 0; p < s.length; p++) {
            s[p] = slot++;
        }
        freshSlots = SlotList.of(s);
        now = RECORDS;
    }

    private static void shuffle(RecordKey[] a, Random random) {
        for (int i = a.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            RecordKey t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    private RecordKey nextKey() {
        RecordKey k = keys[next];
        if (++next == RECORDS) {
            next = 0;
        }
        return k;
    }

    @Benchmark
    public RecordIndex.Entry get() {
        return index.get(nextKey());
    }

    @Benchmark
    public Object baselineHashMapGet() {
        return plain.get(nextKey());
    }

    @Benchmark
    public RecordIndex.Entry insertRemove() {
        RecordSpec spec = fresh[nextFresh];
        nextFresh = (nextFresh + 1) & (fresh.length - 1);
        index.insert(spec, freshSlots, true, ++now);
        return index.remove(spec.key());
    }

    @Benchmark
    public long touch() {
        RecordKey k = nextKey();
        index.touch(k, ++now);
        return now;
    }
}
