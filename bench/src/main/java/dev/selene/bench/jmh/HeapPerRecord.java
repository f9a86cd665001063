package dev.selene.bench.jmh;

import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotList;

import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.lang.management.MemoryMXBean;
import java.util.Random;

/**
 * Measures the Java heap that the resident index retains per record: the entry, its spec and key, its slot
 * list and the hash-map node, for 200k DeepSeek-TP4 records laid out as conversations (chains of 16, every
 * fourth record and each chain's last with a row of 23 pieces, the rest page-only), slot lists taken from a
 * real {@link SlotAccounting}. The pool's own arrays exist before the baseline and are not counted.
 *
 * <p>Run: {@code java -cp "target/selene-bench-0.1.0-SNAPSHOT.jar:target/lib/*" dev.selene.bench.jmh.HeapPerRecord
 * [records]}. Not a JMH benchmark: it measures space, not time.
 */
public final class HeapPerRecord {

    private static final int DEFAULT_RECORDS = 200_000;
    private static final int CHAIN = 16;

    private HeapPerRecord() {
    }

    public static void main(String[] args) throws InterruptedException {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : DEFAULT_RECORDS;
        Layout layout = Layout.deepseekTp4();
        SlotAccounting pool = new SlotAccounting(records * layout.slotsPerRecord(true), 0);
        Random random = new Random(42);

        long base = settledHeapBytes();

        RecordKey[] keys = new RecordKey[records];
        RecordSpec[] specs = new RecordSpec[records];
        SlotList[] slots = new SlotList[records];
        long slotCount = 0;
        int withRow = 0;
        for (int i = 0; i < records; i++) {
            RecordKey parent = i % CHAIN == 0 ? null : keys[i - 1];
            long parentHash = parent == null ? ChainHash.ROOT : parent.hash();
            keys[i] = new RecordKey("deepseek", ChainHash.next(parentHash, random.nextLong()));
            boolean hasRow = i % 4 == 3 || i % CHAIN == CHAIN - 1;
            specs[i] = new RecordSpec(keys[i], parent, hasRow);
            slots[i] = pool.allocate(specs[i].slots(layout));
            slotCount += slots[i].count();
            withRow += hasRow ? 1 : 0;
        }
        long arrays = 3L * (16 + 4L * records); // the three holder arrays, compressed references
        long payload = settledHeapBytes() - base - arrays;
        Reference.reachabilityFence(keys);
        Reference.reachabilityFence(specs);
        Reference.reachabilityFence(slots);

        RecordIndex index = new RecordIndex(false);
        for (int i = 0; i < records; i++) {
            index.insert(specs[i], slots[i], random.nextInt(4) != 0, i);
        }
        keys = null;
        specs = null;
        slots = null;
        long retained = settledHeapBytes() - base;

        System.out.printf("records: %d (%d with a row), %d slots, avg %.1f slots per record%n",
                index.size(), withRow, slotCount, (double) slotCount / records);
        System.out.printf("key + spec + slot list per record: %d bytes%n", payload / records);
        System.out.printf("index overhead per record (entry, map node, table): %d bytes%n",
                (retained - payload) / records);
        System.out.println("heap bytes per resident record: " + retained / records);
        if (index.size() != records) {
            throw new AssertionError("index lost records");
        }
        Reference.reachabilityFence(pool); // its arrays are in the baseline: keep them out of the difference
        Reference.reachabilityFence(index);
    }

    /** Heap in use after the collector has had a few chances to clear everything unreachable. */
    private static long settledHeapBytes() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        Runtime runtime = Runtime.getRuntime();
        long previous = Long.MAX_VALUE;
        long used = 0;
        for (int i = 0; i < 10; i++) {
            System.gc();
            Thread.sleep(50);
            used = memory.getHeapMemoryUsage().getUsed();
            long viaRuntime = runtime.totalMemory() - runtime.freeMemory();
            used = Math.min(used, viaRuntime);
            if (i >= 3 && Math.abs(previous - used) < 4096) {
                break;
            }
            previous = used;
        }
        return used;
    }
}
