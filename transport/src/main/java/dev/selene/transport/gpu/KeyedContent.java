package dev.selene.transport.gpu;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.host.HostMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Record content derived from the record's key, so that any copy of a record (device, host, disk, pool) can be
 * checked byte for byte without keeping the original.
 *
 * <p>Each (key, rank, piece) share has a {@link #seed}; its bytes are the little-endian stream of 64-bit words
 * {@code word[i] = mix64(seed + (i + 1) × GOLDEN_GAMMA)} (SplitMix64's output function), truncated to the share's
 * length. Word i depends only on the seed and i, so any slice can be produced or checked independently.
 */
public final class KeyedContent {

    /** SplitMix64's increment: the odd 64-bit integer closest to 2^64 / φ. */
    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int WORD_BYTES = 8;

    private KeyedContent() {
    }

    /** Seed of rank {@code rank}'s share of piece {@code piece} of the record at {@code key}. */
    public static long seed(RecordKey key, int rank, int piece) {
        long h = mix64(key.hash() + GOLDEN_GAMMA * (key.namespace().hashCode() & 0xFFFF_FFFFL));
        return mix64(h + GOLDEN_GAMMA * ((((long) rank) << 32 | (piece & 0xFFFF_FFFFL)) + 1));
    }

    /** Fills all of {@code dst} with the content stream of {@code seed}. */
    public static void fill(MemorySegment dst, long seed) {
        long size = dst.byteSize();
        long words = size / WORD_BYTES;
        for (long i = 0; i < words; i++) {
            dst.set(WORD, i * WORD_BYTES, word(seed, i));
        }
        long tail = size - words * WORD_BYTES;
        if (tail > 0) {
            long last = word(seed, words);
            for (int b = 0; b < tail; b++) {
                dst.set(ValueLayout.JAVA_BYTE, words * WORD_BYTES + b, (byte) (last >>> (8 * b)));
            }
        }
    }

    /** Offset of the first byte of {@code seg} that differs from the content stream of {@code seed}; -1 if none. */
    public static long firstMismatch(MemorySegment seg, long seed) {
        long size = seg.byteSize();
        long words = size / WORD_BYTES;
        for (long i = 0; i < words; i++) {
            long diff = seg.get(WORD, i * WORD_BYTES) ^ word(seed, i);
            if (diff != 0) {
                return i * WORD_BYTES + Long.numberOfTrailingZeros(diff) / 8;
            }
        }
        long last = word(seed, words);
        for (long b = words * WORD_BYTES; b < size; b++) {
            if (seg.get(ValueLayout.JAVA_BYTE, b) != (byte) (last >>> (8 * (b - words * WORD_BYTES)))) {
                return b;
            }
        }
        return -1;
    }

    /** Writes the keyed content of every share of the record into its device placement (a GPU snapshot). */
    public static void fillRecord(DeviceCopier copier, Layout layout, DevicePlacement placement, RecordKey key,
                                  boolean hasRow) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(layout.pageBytes(), Layout.ALIGNMENT_BYTES);
            for (int piece = 0; piece < layout.slotsPerRecord(hasRow); piece++) {
                MemorySegment share = buffer.asSlice(0, layout.pieceBytes(piece));
                for (int rank = 0; rank < layout.ranks(); rank++) {
                    fill(share, seed(key, rank, piece));
                    copier.writeDevice(placement.address(layout, piece, rank), share);
                }
            }
        }
    }

    /** Whether every share of the record in its device placement holds exactly the keyed content. */
    public static boolean verifyRecord(DeviceCopier copier, Layout layout, DevicePlacement placement, RecordKey key,
                                       boolean hasRow) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(layout.pageBytes(), Layout.ALIGNMENT_BYTES);
            for (int piece = 0; piece < layout.slotsPerRecord(hasRow); piece++) {
                MemorySegment share = buffer.asSlice(0, layout.pieceBytes(piece));
                for (int rank = 0; rank < layout.ranks(); rank++) {
                    copier.readDevice(placement.address(layout, piece, rank), share);
                    if (firstMismatch(share, seed(key, rank, piece)) >= 0) {
                        return false;
                    }
                }
            }
            return true;
        }
    }

    /** Whether every share of the record in host slots {@code slots} holds exactly the keyed content. */
    public static boolean verifyHostRecord(Layout layout, HostMemory host, SlotList slots, RecordKey key,
                                           boolean hasRow) {
        for (int piece = 0; piece < layout.slotsPerRecord(hasRow); piece++) {
            for (int rank = 0; rank < layout.ranks(); rank++) {
                MemorySegment share = host.share(slots.slot(piece), rank, layout.pieceBytes(piece));
                if (firstMismatch(share, seed(key, rank, piece)) >= 0) {
                    return false;
                }
            }
        }
        return true;
    }

    private static long word(long seed, long index) {
        return mix64(seed + (index + 1) * GOLDEN_GAMMA);
    }

    private static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
