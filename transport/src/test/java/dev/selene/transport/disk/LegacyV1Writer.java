package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The test-only writer of format version 1 (one whole-file checksum), kept to produce the committed file that
 * {@link LegacyFormatTest} recovers. Written independently of the reader's checksum code, from the grammar alone.
 *
 * <p>Regenerate (only if the committed file is lost; the point is that it never changes):
 * {@code java -cp engine/target/classes:transport/target/classes:transport/target/test-classes
 * dev.selene.transport.disk.LegacyV1Writer transport/src/test/resources/record-format/v1-legacy-small.rec}
 */
final class LegacyV1Writer {

    /** Two ranks, one 4 KiB page per record, a 100-byte row: a 24 KiB file. */
    static final Layout LAYOUT = new Layout("legacy-small", 2, 4096, 100, 1, 16);
    static final RecordKey PARENT = new RecordKey("legacy", 0x0000_0000_5e1e_0001L);
    static final RecordSpec SPEC = new RecordSpec(new RecordKey("legacy", 0x00c0_ffee_00c0_ffeeL), PARENT, true);
    /** Seed of the {@link SharePattern} in every share. */
    static final long SEED = SPEC.key().hash();
    /** Where the committed file lives on the test class path. */
    static final String RESOURCE = "/record-format/v1-legacy-small.rec";

    private LegacyV1Writer() {
    }

    public static void main(String[] args) throws IOException {
        write(Path.of(args[0]));
    }

    static void write(Path file) throws IOException {
        RecordHeader header = new RecordHeader(RecordFileFormat.VERSION_WHOLE_CHECKSUM, LAYOUT, SPEC);
        byte[] headerBlock = header.toBytes();
        CRC32C whole = new CRC32C();
        whole.update(headerBlock);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            channel.write(ByteBuffer.wrap(headerBlock));
            for (int piece = 0; piece < header.pieceCount(); piece++) {
                for (int rank = 0; rank < LAYOUT.ranks(); rank++) {
                    byte[] share = new byte[LAYOUT.pageBytes()];
                    SharePattern.fill(MemorySegment.ofArray(share), SEED, piece, rank, LAYOUT.pieceBytes(piece));
                    whole.update(share);
                    channel.write(ByteBuffer.wrap(share));
                }
            }
            ByteBuffer footer = ByteBuffer.allocate(RecordFileFormat.BLOCK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            footer.putInt(RecordFileFormat.FOOTER_MAGIC).putInt(1).putInt((int) whole.getValue()).rewind();
            channel.write(footer);
        }
    }
}
