package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.transport.disk.RecordCorpus.Entry;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import static dev.selene.engine.codec.RecordFileFormat.HEADER_BYTES;
import static dev.selene.engine.codec.RecordFileFormat.HEADER_CRC_OFFSET;

/**
 * One way a record file's bytes go wrong: on the disk (flipped bits, a lost tail, a lost write of zeros), in a buggy
 * writer or copier (garbage appended, blocks of another record's file), or in a peer that reseals what it changed.
 * Applied to a copy; offsets past the end of the bytes are clipped.
 */
sealed interface RecordMutation {

    /** The mutated bytes; {@code file} may be changed in place and returned. */
    byte[] apply(byte[] file);

    /** Applies {@code mutations} in order to a copy of {@code file}. */
    static byte[] applyAll(byte[] file, List<RecordMutation> mutations) {
        byte[] bytes = file.clone();
        for (RecordMutation mutation : mutations) {
            bytes = mutation.apply(bytes);
        }
        return bytes;
    }

    /** Flips each listed bit (bit i of the file is bit {@code i % 8} of byte {@code i / 8}). */
    record FlipBits(List<Long> bits) implements RecordMutation {
        @Override
        public byte[] apply(byte[] file) {
            for (long bit : bits) {
                if (bit >>> 3 < file.length) {
                    file[(int) (bit >>> 3)] ^= (byte) (1 << (bit & 7));
                }
            }
            return file;
        }
    }

    /** Keeps the first {@code length} bytes. */
    record Truncate(int length) implements RecordMutation {
        @Override
        public byte[] apply(byte[] file) {
            return length < file.length ? Arrays.copyOf(file, length) : file;
        }
    }

    /** Appends {@code bytes} bytes of garbage drawn from {@code seed}. */
    record Extend(int bytes, long seed) implements RecordMutation {
        @Override
        public byte[] apply(byte[] file) {
            byte[] longer = Arrays.copyOf(file, file.length + bytes);
            byte[] garbage = new byte[bytes];
            new SplittableRandom(seed).nextBytes(garbage);
            System.arraycopy(garbage, 0, longer, file.length, bytes);
            return longer;
        }
    }

    /** Copies {@code length} bytes of {@code donor}'s file from {@code from} over the file at {@code at}. */
    record Splice(Entry donor, int from, int length, int at) implements RecordMutation {
        @Override
        public byte[] apply(byte[] file) {
            int n = Math.min(length, Math.min(donor.bytes().length - from, file.length - at));
            if (n > 0) {
                System.arraycopy(donor.bytes(), from, file, at, n);
            }
            return file;
        }
    }

    /** Puts {@code donor}'s header block over the first block. */
    record HeaderFrom(Entry donor) implements RecordMutation {
        @Override
        public byte[] apply(byte[] file) {
            System.arraycopy(donor.bytes(), 0, file, 0, Math.min(HEADER_BYTES, file.length));
            return file;
        }
    }

    /** Puts {@code donor}'s footer block over the same number of bytes at the end of the file. */
    record FooterFrom(Entry donor) implements RecordMutation {
        @Override
        public byte[] apply(byte[] file) {
            int footer = donor.bytes().length - donor.footerOffset();
            int at = Math.max(0, file.length - footer);
            System.arraycopy(donor.bytes(), donor.footerOffset(), file, at, Math.min(footer, file.length));
            return file;
        }
    }

    /** Zeroes {@code length} bytes from {@code from}: a write that never reached the disk. */
    record Zero(int from, int length) implements RecordMutation {
        @Override
        public byte[] apply(byte[] file) {
            if (from < file.length) {
                Arrays.fill(file, from, Math.min(file.length, from + length), (byte) 0);
            }
            return file;
        }
    }

    /**
     * Rewrites the little-endian {@code width}-byte header field at {@code offset} (version .. parent hash, offsets
     * 4..63) to {@code value}, then recomputes the header checksum, as a buggy writer would.
     */
    record ResealedHeaderField(int offset, int width, long value) implements RecordMutation {

        private static final ValueLayout.OfInt INT32 =
                ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        private static final ValueLayout.OfLong INT64 =
                ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

        @Override
        public byte[] apply(byte[] file) {
            if (file.length < RecordFileFormat.HEADER_BYTES) {
                return file;
            }
            MemorySegment header = MemorySegment.ofArray(file);
            if (width == Long.BYTES) {
                header.set(INT64, offset, value);
            } else {
                header.set(INT32, offset, (int) value);
            }
            CRC32C crc = new CRC32C();
            crc.update(file, 0, HEADER_CRC_OFFSET);
            header.set(INT32, HEADER_CRC_OFFSET, (int) crc.getValue());
            return file;
        }
    }
}
