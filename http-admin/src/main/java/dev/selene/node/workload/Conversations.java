package dev.selene.node.workload;

import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;

/**
 * The conversations of one run, generated from the settings' seed, and their GPU snapshots: the keyed content of
 * every record written into device memory before the publications start (the GPU's prefill, not the cache's work),
 * freed once the run no longer needs them.
 */
public final class Conversations {

    /** Namespace of the workload's records. */
    public static final String NAMESPACE = "burst";

    private final WorkloadSettings settings;
    private final List<Conversation> list;

    private Conversations(WorkloadSettings settings, List<Conversation> list) {
        this.settings = settings;
        this.list = list;
    }

    /** The conversations of {@code settings}: chains of keys from its seed, one turn ending at each row. */
    public static Conversations generate(WorkloadSettings settings) {
        int n = settings.recordsPerConversation();
        List<Conversation> out = new ArrayList<>(settings.conversations());
        for (int c = 0; c < settings.conversations(); c++) {
            long[] blocks = new long[n];
            for (int i = 0; i < n; i++) {
                blocks[i] = ChainHash.mix(settings.seed() * 0x1000193L + ((long) c << 20) + i);
            }
            long[] chain = ChainHash.chain(blocks);
            RecordSpec[] specs = new RecordSpec[n];
            for (int i = 0; i < n; i++) {
                RecordKey parent = i == 0 ? null : new RecordKey(NAMESPACE, chain[i - 1]);
                specs[i] = new RecordSpec(new RecordKey(NAMESPACE, chain[i]), parent, settings.hasRow(i));
            }
            out.add(new Conversation(chain, specs));
        }
        return new Conversations(settings, out);
    }

    /** How many conversations there are. */
    public int size() {
        return list.size();
    }

    List<Conversation> list() {
        return list;
    }

    /** The settings they were generated from. */
    public WorkloadSettings settings() {
        return settings;
    }

    /** {@code each} summed over every record of every conversation. */
    public long sumOverRecords(ToLongFunction<RecordSpec> each) {
        long sum = 0;
        for (Conversation c : list) {
            for (RecordSpec spec : c.specs) {
                sum += each.applyAsLong(spec);
            }
        }
        return sum;
    }

    /** Every record's snapshot, conversation after conversation (after {@link #prefill}). */
    public List<DevicePlacement> snapshots() {
        List<DevicePlacement> out = new ArrayList<>();
        for (Conversation c : list) {
            out.addAll(List.of(c.snapshots));
        }
        return out;
    }

    /** Whether each record of {@link #snapshots()}, in the same order, carries a row. */
    public List<Boolean> hasRows() {
        List<Boolean> out = new ArrayList<>();
        for (Conversation c : list) {
            for (RecordSpec spec : c.specs) {
                out.add(spec.hasRow());
            }
        }
        return out;
    }

    /**
     * Writes every record's keyed content into device memory on {@code copier}, as the GPU's prefill would, with a
     * progress line on {@code progressOut} when the settings ask for one.
     */
    public void prefill(DeviceCopier copier, PrintStream progressOut) {
        Layout layout = settings.layout();
        AtomicLong done = new AtomicLong();
        Progress progress = new Progress(settings.progress() ? progressOut : null, "prefill",
                () -> done.get() + "/" + list.size() + " conversations");
        int threads = Math.max(1, Runtime.getRuntime().availableProcessors());
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            for (Conversation conv : list) {
                pool.submit(() -> {
                    for (int i = 0; i < conv.specs.length; i++) {
                        boolean hasRow = conv.specs[i].hasRow();
                        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(layout, hasRow));
                        conv.snapshotBase[i] = base;
                        conv.snapshots[i] = DevicePlacement.contiguous(layout, base, hasRow);
                        KeyedContent.fillRecord(copier, layout, conv.snapshots[i], conv.specs[i].key(), hasRow);
                    }
                    done.incrementAndGet();
                });
            }
        } finally {
            progress.stop();
        }
    }

    /** Gives the snapshots' device memory back (those still held; a second call does nothing). */
    public void freeSnapshots(DeviceCopier copier) {
        for (Conversation conv : list) {
            for (int i = 0; i < conv.snapshots.length; i++) {
                if (conv.snapshots[i] != null) {
                    copier.freeDevice(conv.snapshotBase[i]);
                    conv.snapshots[i] = null;
                }
            }
        }
    }
}
