package dev.selene.bench.disk;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.ShareMemory;
import dev.selene.transport.host.HostMemory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A benchmark's records: {@code count} root records with a row, each in its own run of adjacent host slots of one
 * {@link HostMemory} mapping, filled with bytes derived from the record's index so that a read can be verified.
 *
 * <p>Record {@code i} occupies slots {@code [i × slotsPerRecord, (i + 1) × slotsPerRecord)}; since the file body is
 * pieces in slot order, the body is also one contiguous range of the mapping ({@link #body(int)}), which is what a
 * raw O_DIRECT baseline writes.
 */
public final class BenchRecords implements AutoCloseable {

    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG;

    private final Layout layout;
    private final int count;
    private final int slotsPerRecord;
    private final String namespace;
    private final HostMemory memory;

    private BenchRecords(Layout layout, int count, String namespace) {
        this.layout = layout;
        this.count = count;
        this.slotsPerRecord = layout.slotsPerRecord(true);
        this.namespace = namespace;
        this.memory = HostMemory.allocate(layout, Math.multiplyExact(count, slotsPerRecord));
    }

    /** Maps and fills {@code count} records of {@code layout}, each with a row. */
    public static BenchRecords create(Layout layout, int count, String namespace) {
        BenchRecords records = new BenchRecords(layout, count, namespace);
        records.fill();
        return records;
    }

    /** Records that fit {@code volumeBytes} (at least one). */
    public static int countFor(Layout layout, long volumeBytes) {
        return (int) Math.max(1, volumeBytes / bodyBytes(layout));
    }

    /** Body bytes of one record with a row: every rank's share of every piece, padded to a page. */
    public static long bodyBytes(Layout layout) {
        return (long) layout.slotsPerRecord(true) * layout.slotBytes();
    }

    public Layout layout() {
        return layout;
    }

    public int count() {
        return count;
    }

    /** Body bytes of one record. */
    public long bodyBytes() {
        return bodyBytes(layout);
    }

    /** Body bytes of all records. */
    public long totalBytes() {
        return bodyBytes() * count;
    }

    /** The spec of record {@code i}: a root with a row. */
    public RecordSpec spec(int i) {
        return new RecordSpec(new RecordKey(namespace, keyHash(i)), null, true);
    }

    /** Where record {@code i}'s shares live. */
    public ShareMemory shares(int i) {
        int first = i * slotsPerRecord;
        return (piece, rank) -> memory.share(first + piece, rank, layout.pageBytes());
    }

    /** Record {@code i}'s body as one contiguous range of the mapping. */
    public MemorySegment body(int i) {
        return memory.segment().asSlice(i * bodyBytes(), bodyBytes());
    }

    /** Zeroes every record, so that a read that moves nothing fails {@link #verify()}. */
    public void clear() {
        memory.segment().fill((byte) 0);
    }

    /** Records whose used bytes differ from what {@link #create} filled in; 0 when every read was exact. */
    public int verify() {
        int bad = 0;
        for (int i = 0; i < count; i++) {
            if (!matches(i)) {
                bad++;
            }
        }
        return bad;
    }

    @Override
    public void close() {
        memory.close();
    }

    private void fill() {
        for (int i = 0; i < count; i++) {
            MemorySegment body = body(i);
            for (long at = 0; at < body.byteSize(); at += Long.BYTES) {
                body.set(WORD, at, word(i, at));
            }
        }
    }

    private boolean matches(int i) {
        ShareMemory shares = shares(i);
        for (int piece = 0; piece < slotsPerRecord; piece++) {
            int used = layout.pieceBytes(piece);
            for (int rank = 0; rank < layout.ranks(); rank++) {
                MemorySegment share = shares.share(piece, rank);
                long base = share.address() - body(i).address();
                for (long at = 0; at + Long.BYTES <= used; at += Long.BYTES) {
                    if (share.get(WORD, at) != word(i, base + at)) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    private static long keyHash(int i) {
        return mix(0x5E1E_4E00_0000_0000L + i);
    }

    private static long word(int record, long offset) {
        return mix(((long) record << 40) ^ offset);
    }

    /** SplitMix64's finaliser. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }
}
