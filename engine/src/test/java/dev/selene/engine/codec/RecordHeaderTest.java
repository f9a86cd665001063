package dev.selene.engine.codec;

import dev.selene.engine.codec.RecordFormatException.Kind;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordHeaderTest {

    private static final RecordKey PARENT = new RecordKey("llama-70b", 0x0123_4567_89ab_cdefL);
    private static final RecordSpec CHILD = new RecordSpec(PARENT.child(42), PARENT, true);

    @Test
    void encode_thenDecode_returnsEqualHeader() throws Exception {
        for (RecordSpec spec : new RecordSpec[] {CHILD, new RecordSpec(PARENT, null, false)}) {
            for (Layout layout : new Layout[] {Layout.small(), Layout.deepseekTp4(), Layout.qwenTp1()}) {
                RecordHeader header = RecordHeader.current(spec, layout);
                RecordHeader decoded = RecordHeader.decode(MemorySegment.ofArray(header.toBytes()));
                assertEquals(header, decoded);
            }
        }
    }

    @Test
    void decode_version1Header_isAccepted() throws Exception {
        RecordHeader v1 = new RecordHeader(RecordFileFormat.VERSION_WHOLE_CHECKSUM, Layout.small(), CHILD);
        RecordHeader decoded = RecordHeader.decode(MemorySegment.ofArray(v1.toBytes()));
        assertEquals(1, decoded.version());
        assertEquals(RecordFileFormat.BLOCK_BYTES, decoded.footerBytes());
    }

    @Test
    void decode_withBadMagic_failsCorrupt() {
        byte[] bytes = header().toBytes();
        bytes[0] ^= 1;
        assertKind(Kind.CORRUPT, bytes, "bad magic");
    }

    @Test
    void decode_withFlippedBit_failsCorrupt() {
        byte[] bytes = header().toBytes();
        bytes[50] ^= 0x10;
        assertKind(Kind.CORRUPT, bytes, "header checksum mismatch");
    }

    @Test
    void decode_withVersionBelowOldest_failsTooOld() {
        byte[] bytes = header().toBytes();
        MemorySegment.ofArray(bytes).set(RecordFileFormat.INT32, 4, 0);
        assertKind(Kind.TOO_OLD, bytes, "older than the oldest");
    }

    @Test
    void decode_withVersionAboveCurrent_failsTooNew() {
        byte[] bytes = header().toBytes();
        MemorySegment.ofArray(bytes).set(RecordFileFormat.INT32, 4, RecordFileFormat.VERSION_CURRENT + 1);
        assertKind(Kind.TOO_NEW, bytes, "newer Selene");
    }

    @Test
    void decode_ofFewerBytesThanABlock_failsTruncated() {
        byte[] bytes = new byte[100];
        System.arraycopy(header().toBytes(), 0, bytes, 0, bytes.length);
        assertKind(Kind.TRUNCATED, bytes, "shorter than its 4096-byte header");
        assertKind(Kind.TRUNCATED, new byte[0], "shorter");
    }

    @Test
    void decode_withPieceCountContradictingLayout_failsCorrupt() {
        byte[] bytes = header().toBytes();
        MemorySegment b = MemorySegment.ofArray(bytes);
        b.set(RecordFileFormat.INT32, 36, 99);
        reseal(b);
        assertKind(Kind.CORRUPT, bytes, "99 pieces");
    }

    @Test
    void decode_withInvalidNamespace_failsCorrupt() {
        byte[] bytes = header().toBytes();
        MemorySegment b = MemorySegment.ofArray(bytes);
        b.set(ValueLayout.JAVA_BYTE, 66, (byte) '/');
        reseal(b);
        assertKind(Kind.CORRUPT, bytes, "namespace");
    }

    @Test
    void requireLayout_withOtherShape_failsLayoutMismatch() throws Exception {
        RecordHeader header = header();
        header.requireLayout(new Layout("renamed", 2, 4096, 2 * 4096 + 100, 2, 16));
        RecordFormatException e = assertThrows(RecordFormatException.class,
                () -> header.requireLayout(Layout.deepseekTp4()));
        assertEquals(Kind.LAYOUT_MISMATCH, e.kind());
        assertTrue(e.getMessage().contains("deepseek-tp4"), e.getMessage());
    }

    @Test
    void requireFileLength_shorterIsTruncated_longerIsCorrupt() throws Exception {
        RecordHeader header = header();
        header.requireFileLength(header.fileLength());
        assertEquals(Kind.TRUNCATED, assertThrows(RecordFormatException.class,
                () -> header.requireFileLength(header.fileLength() - 4096)).kind());
        assertEquals(Kind.CORRUPT, assertThrows(RecordFormatException.class,
                () -> header.requireFileLength(header.fileLength() + 1)).kind());
    }

    @Test
    void everyFailureKind_isReportedDistinctly() {
        Set<Kind> seen = EnumSet.noneOf(Kind.class);
        byte[] badMagic = header().toBytes();
        badMagic[1] ^= 1;
        byte[] tooOld = header().toBytes();
        MemorySegment.ofArray(tooOld).set(RecordFileFormat.INT32, 4, -1);
        byte[] tooNew = header().toBytes();
        MemorySegment.ofArray(tooNew).set(RecordFileFormat.INT32, 4, 1000);
        byte[] truncated = Arrays.copyOf(header().toBytes(), 12);
        for (byte[] bytes : new byte[][] {badMagic, tooOld, tooNew, truncated}) {
            seen.add(assertThrows(RecordFormatException.class,
                    () -> RecordHeader.decode(MemorySegment.ofArray(bytes))).kind());
        }
        seen.add(assertThrows(RecordFormatException.class,
                () -> header().requireLayout(Layout.qwenTp1())).kind());
        assertEquals(EnumSet.allOf(Kind.class), seen);
    }

    private static RecordHeader header() {
        return RecordHeader.current(CHILD, Layout.small());
    }

    private static void reseal(MemorySegment block) {
        CRC32C crc = new CRC32C();
        crc.update(block.asSlice(0, RecordFileFormat.HEADER_CRC_OFFSET).asByteBuffer());
        block.set(RecordFileFormat.INT32, RecordFileFormat.HEADER_CRC_OFFSET, (int) crc.getValue());
    }

    private static void assertKind(Kind kind, byte[] bytes, String messagePart) {
        RecordFormatException e = assertThrows(RecordFormatException.class,
                () -> RecordHeader.decode(MemorySegment.ofArray(bytes)));
        assertEquals(kind, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains(messagePart), e.getMessage());
    }
}
