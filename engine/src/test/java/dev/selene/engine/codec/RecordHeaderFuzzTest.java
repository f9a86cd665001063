package dev.selene.engine.codec;

import dev.selene.engine.codec.RecordFormatException.Kind;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

import static dev.selene.engine.codec.RecordFileFormat.HEADER_BYTES;
import static dev.selene.engine.codec.RecordFileFormat.HEADER_CRC_OFFSET;
import static dev.selene.engine.codec.RecordFileFormat.INT16;
import static dev.selene.engine.codec.RecordFileFormat.INT32;
import static dev.selene.engine.codec.RecordFileFormat.INT64;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@link RecordHeader#decode} over damaged header blocks (bits flipped, bytes zeroed or overwritten, the block cut
 * short) and forged ones (a field rewritten, then the header checksum recomputed, as a buggy writer or a hostile
 * peer would send): it returns a header, or fails with a {@link RecordFormatException} of a kind, and nothing else.
 */
class RecordHeaderFuzzTest {

    private static final RecordKey ROOT = new RecordKey("decode", 0x0123_4567_89ab_cdefL);
    /** 128 characters, the longest namespace. */
    private static final RecordKey LONG_NAMESPACE = new RecordKey("n".repeat(RecordKey.MAX_NAMESPACE_CHARS), 7);
    /** 255 UTF-8 bytes, the longest layout name, mostly two-byte characters. */
    private static final Layout LONG_NAME = new Layout("é".repeat(127) + "x", 3, 8192, 5000, 4, 32);

    private static final List<RecordHeader> ORIGINALS = List.of(
            RecordHeader.current(new RecordSpec(ROOT, null, false), Layout.small()),
            RecordHeader.current(new RecordSpec(ROOT.child(1), ROOT, true), Layout.small()),
            RecordHeader.current(new RecordSpec(ROOT.child(2), ROOT, true), Layout.deepseekTp4()),
            new RecordHeader(RecordFileFormat.VERSION_WHOLE_CHECKSUM, Layout.qwenTp1(),
                    new RecordSpec(ROOT.child(3), ROOT, true)),
            RecordHeader.current(new RecordSpec(LONG_NAMESPACE, null, true), LONG_NAME));

    /** Offset and width of every numeric field before the namespace. */
    private static final List<Field> NUMERIC_FIELDS = List.of(
            new Field(4, 4), new Field(8, 4), new Field(12, 4), new Field(16, 4), new Field(20, 4),
            new Field(24, 4), new Field(28, 4), new Field(32, 4), new Field(36, 4), new Field(40, 8),
            new Field(48, 8), new Field(56, 8));

    private static final int NAMESPACE_LENGTH_OFFSET = 64;

    @Property(tries = 2000)
    void damagedBlock_decodesToTheOriginal_orFailsWithAKind(@ForAll("damaged") Damaged damaged) {
        byte[] block = damaged.apply();
        RecordHeader decoded = decodeOrKind(block);
        if (decoded != null) {
            assertArrayEquals(damaged.original().toBytes(), Arrays.copyOf(block, HEADER_BYTES),
                    "a header decoded from a block that differs from the original in checksummed bytes");
            assertEquals(damaged.original(), decoded);
        }
    }

    @Property(tries = 2000)
    void forgedNumericField_decodesToAHeaderThatRoundTrips_orFailsWithAKind(@ForAll("forgedFields") Forged forged) {
        RecordHeader decoded = decodeOrKind(forged.apply());
        if (decoded != null) {
            assertEquals(decoded, decodeOrKind(decoded.toBytes()), "a decoded header does not round-trip");
        }
    }

    /** Arbitrary bytes over the namespace and layout name, resealed (it found the example below). */
    @Property(tries = 2000)
    void forgedNames_decodeToAHeaderThatRoundTrips_orFailWithAKind(@ForAll("forgedNames") Forged forged) {
        RecordHeader decoded = decodeOrKind(forged.apply());
        if (decoded != null) {
            assertEquals(decoded, decodeOrKind(decoded.toBytes()), "a decoded header does not round-trip");
        }
    }

    /**
     * Found by {@link #forgedNames_decodeToAHeaderThatRoundTrips_orFailWithAKind}: 86 or more bytes that are not
     * UTF-8 each decode to U+FFFD (three bytes), so the name passes the 255-byte check on its stored length and then
     * fails RecordHeader's own check as an IllegalArgumentException, outside decode's catch.
     */
    @Example
    void forgedLayoutNameOfInvalidUtf8_failsCorrupt() {
        byte[] block = ORIGINALS.get(1).toBytes();
        MemorySegment b = MemorySegment.ofArray(block);
        long nameAt = NAMESPACE_LENGTH_OFFSET + Short.BYTES + b.get(INT16, NAMESPACE_LENGTH_OFFSET);
        b.set(INT16, nameAt, (short) 200);
        Arrays.fill(block, (int) nameAt + Short.BYTES, (int) nameAt + Short.BYTES + 200, (byte) 0xFF);
        reseal(block);
        try {
            RecordHeader.decode(b);
            fail("a layout name of invalid UTF-8 was accepted");
        } catch (RecordFormatException e) {
            assertEquals(Kind.CORRUPT, e.kind(), e.getMessage());
        }
    }

    @Provide
    Arbitrary<Damaged> damaged() {
        Arbitrary<RecordHeader> original = Arbitraries.of(ORIGINALS);
        Arbitrary<Damage> damage = Arbitraries.oneOf(
                Arbitraries.longs().between(0, HEADER_BYTES * 8L - 1).list().ofMinSize(1).ofMaxSize(8)
                        .map(Damage.FlipBits::new),
                Arbitraries.integers().between(0, HEADER_BYTES - 1).map(Damage.Cut::new),
                Combinators.combine(Arbitraries.integers().between(0, HEADER_BYTES - 1),
                        Arbitraries.integers().between(1, HEADER_BYTES)).as(Damage.Zero::new),
                Combinators.combine(Arbitraries.integers().between(0, HEADER_BYTES - 1),
                        Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(64))
                        .as((at, bytes) -> new Damage.Overwrite(at, List.of(boxed(bytes)))));
        return Combinators.combine(original, damage).as(Damaged::new);
    }

    @Provide
    Arbitrary<Forged> forgedFields() {
        Arbitrary<Long> value = Arbitraries.oneOf(Arbitraries.longs(), Arbitraries.longs().between(-2, 70_000));
        Arbitrary<Rewrite> numeric = Combinators.combine(Arbitraries.of(NUMERIC_FIELDS), value)
                .as((field, v) -> new Rewrite(false, field.offset(), field.width(), v));
        Arbitrary<Rewrite> length = Combinators.combine(Arbitraries.of(false, true), value)
                .as((layoutName, v) -> new Rewrite(layoutName, layoutName ? 0 : NAMESPACE_LENGTH_OFFSET, 2, v));
        return Combinators.combine(Arbitraries.of(ORIGINALS), Arbitraries.oneOf(numeric, length).list()
                .ofMinSize(1).ofMaxSize(3)).as(Forged::new);
    }

    @Provide
    Arbitrary<Forged> forgedNames() {
        Arbitrary<Rewrite> nameLength = Arbitraries.longs().between(0, 300)
                .map(v -> new Rewrite(true, 0, 2, v));
        Arbitrary<Rewrite> nameBytes = Combinators.combine(Arbitraries.integers().between(0, 300),
                Arbitraries.longs()).as((at, v) -> new Rewrite(false, NAMESPACE_LENGTH_OFFSET + at, 8, v));
        return Combinators.combine(Arbitraries.of(ORIGINALS), Arbitraries.oneOf(nameLength, nameBytes).list()
                .ofMinSize(1).ofMaxSize(40)).as(Forged::new);
    }

    /** The decoded header, or null after checking that decode failed with a kind; fails on any other exception. */
    private static RecordHeader decodeOrKind(byte[] block) {
        try {
            RecordHeader header = RecordHeader.decode(MemorySegment.ofArray(block));
            Statistics.label("outcome").collect("decoded");
            return header;
        } catch (RecordFormatException e) {
            assertNotNull(e.kind());
            Statistics.label("outcome").collect(e.kind());
            return null;
        } catch (RuntimeException e) {
            throw new AssertionError("decode threw " + e + " instead of a RecordFormatException", e);
        }
    }

    private static void reseal(byte[] block) {
        CRC32C crc = new CRC32C();
        crc.update(block, 0, HEADER_CRC_OFFSET);
        MemorySegment.ofArray(block).set(INT32, HEADER_CRC_OFFSET, (int) crc.getValue());
    }

    private static Byte[] boxed(byte[] bytes) {
        Byte[] boxed = new Byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            boxed[i] = bytes[i];
        }
        return boxed;
    }

    private record Field(int offset, int width) {
    }

    /** One way a stored header block gets damaged. */
    private sealed interface Damage {

        byte[] apply(byte[] block);

        record FlipBits(List<Long> bits) implements Damage {
            @Override
            public byte[] apply(byte[] block) {
                for (long bit : bits) {
                    block[(int) (bit >>> 3)] ^= (byte) (1 << (bit & 7));
                }
                return block;
            }
        }

        /** The block ends after {@code length} bytes, as a short file's does. */
        record Cut(int length) implements Damage {
            @Override
            public byte[] apply(byte[] block) {
                return Arrays.copyOf(block, length);
            }
        }

        record Zero(int from, int length) implements Damage {
            @Override
            public byte[] apply(byte[] block) {
                Arrays.fill(block, from, Math.min(block.length, from + length), (byte) 0);
                return block;
            }
        }

        record Overwrite(int at, List<Byte> bytes) implements Damage {
            @Override
            public byte[] apply(byte[] block) {
                for (int i = 0; i < bytes.size() && at + i < block.length; i++) {
                    block[at + i] = bytes.get(i);
                }
                return block;
            }
        }
    }

    private record Damaged(RecordHeader original, Damage damage) {

        byte[] apply() {
            return damage.apply(original.toBytes());
        }
    }

    /**
     * A little-endian rewrite of {@code width} bytes at {@code offset}, or (when {@code layoutNameLength}) of the
     * layout name's length field, wherever the namespace length then puts it.
     */
    private record Rewrite(boolean layoutNameLength, int offset, int width, long value) {

        void applyTo(byte[] block) {
            MemorySegment b = MemorySegment.ofArray(block);
            long at = layoutNameLength
                    ? NAMESPACE_LENGTH_OFFSET + Short.BYTES + Short.toUnsignedInt(b.get(INT16, NAMESPACE_LENGTH_OFFSET))
                    : offset;
            if (at + width > HEADER_CRC_OFFSET) {
                return;
            }
            switch (width) {
                case 2 -> b.set(INT16, at, (short) value);
                case 4 -> b.set(INT32, at, (int) value);
                default -> b.set(INT64, at, value);
            }
        }
    }

    /** A header block with fields rewritten and its checksum recomputed over them. */
    private record Forged(RecordHeader original, List<Rewrite> rewrites) {

        byte[] apply() {
            byte[] block = original.toBytes();
            rewrites.forEach(r -> r.applyTo(block));
            reseal(block);
            return block;
        }
    }
}
