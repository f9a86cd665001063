package dev.selene.engine.codec;

import dev.selene.engine.codec.RecordFormatException.Kind;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordFooterTest {

    private static final RecordSpec SPEC = new RecordSpec(new RecordKey("ns", 77), new RecordKey("ns", 76), true);

    @Test
    void encode_thenDecode_roundTripsAndVerifiesTheBody() throws Exception {
        Layout layout = Layout.small();
        RecordHeader header = RecordHeader.current(SPEC, layout);
        MemorySegment headerBlock = MemorySegment.ofArray(header.toBytes());
        TestShares shares = new TestShares(layout, true).fill(1, (byte) 0);
        RecordFooter footer = RecordFooter.of(header, headerBlock, RecordChecksums.of(layout, true, shares));
        MemorySegment block = MemorySegment.ofArray(new byte[header.footerBytes()]);
        footer.encodeTo(block, header);

        RecordFooter decoded = RecordFooter.decode(header, headerBlock, block);
        assertEquals(footer.wholeCrc(), decoded.wholeCrc());
        assertEquals(footer.rowCrc(), decoded.rowCrc());
        assertEquals(layout.pagesPerRecord(), decoded.pageCount());
        RecordChecksums reread = RecordChecksums.forFile(header, headerBlock);
        reread.updateAll(shares);
        decoded.verify(reread);
    }

    @Test
    void verify_afterABodyChange_namesThePart() throws Exception {
        Layout layout = Layout.small();
        RecordHeader header = RecordHeader.current(SPEC, layout);
        MemorySegment headerBlock = MemorySegment.ofArray(header.toBytes());
        TestShares shares = new TestShares(layout, true).fill(1, (byte) 0);
        RecordFooter footer = RecordFooter.of(header, headerBlock, RecordChecksums.of(layout, true, shares));

        shares.share(1, 0).set(ValueLayout.JAVA_BYTE, 10, (byte) ~shares.share(1, 0).get(ValueLayout.JAVA_BYTE, 10));
        RecordFormatException page = assertThrows(RecordFormatException.class,
                () -> footer.verify(RecordChecksums.of(layout, true, shares)));
        assertEquals(Kind.CORRUPT, page.kind());
        assertTrue(page.getMessage().contains("page 1 checksum mismatch"), page.getMessage());

        TestShares rowChanged = new TestShares(layout, true).fill(1, (byte) 0);
        rowChanged.share(4, 1).set(ValueLayout.JAVA_BYTE, 99, (byte) 0x77);
        RecordFormatException row = assertThrows(RecordFormatException.class,
                () -> footer.verify(RecordChecksums.of(layout, true, rowChanged)));
        assertTrue(row.getMessage().contains("row checksum mismatch"), row.getMessage());
    }

    @Test
    void decode_ofAFooterNeverWritten_failsCorrupt() {
        Layout layout = Layout.small();
        RecordHeader header = RecordHeader.current(SPEC, layout);
        RecordFormatException e = assertThrows(RecordFormatException.class, () -> RecordFooter.decode(header,
                MemorySegment.ofArray(header.toBytes()), MemorySegment.ofArray(new byte[header.footerBytes()])));
        assertEquals(Kind.CORRUPT, e.kind());
        assertTrue(e.getMessage().contains("never written"), e.getMessage());
    }

    @Test
    void decode_withAFlippedStoredChecksum_failsCorrupt() {
        Layout layout = Layout.small();
        RecordHeader header = RecordHeader.current(SPEC, layout);
        MemorySegment headerBlock = MemorySegment.ofArray(header.toBytes());
        RecordFooter footer = RecordFooter.of(header, headerBlock,
                RecordChecksums.of(layout, true, new TestShares(layout, true).fill(2, (byte) 0)));
        byte[] bytes = new byte[header.footerBytes()];
        footer.encodeTo(MemorySegment.ofArray(bytes), header);
        bytes[17] ^= 4;
        RecordFormatException e = assertThrows(RecordFormatException.class,
                () -> RecordFooter.decode(header, headerBlock, MemorySegment.ofArray(bytes)));
        assertEquals(Kind.CORRUPT, e.kind());
        assertTrue(e.getMessage().contains("header and footer checksum mismatch"), e.getMessage());
    }

    @Test
    void footer_ofARecordWithManyPages_growsPastOneBlock() throws Exception {
        Layout layout = new Layout("many", 1, 4096, 0, 2000, 16);
        RecordHeader header = RecordHeader.current(new RecordSpec(new RecordKey("ns", 1), null, false), layout);
        assertEquals(2 * 4096, header.footerBytes());
        MemorySegment headerBlock = MemorySegment.ofArray(header.toBytes());
        TestShares shares = new TestShares(layout, false).fill(4, (byte) 0);
        RecordFooter footer = RecordFooter.of(header, headerBlock, RecordChecksums.of(layout, false, shares));
        MemorySegment block = MemorySegment.ofArray(new byte[header.footerBytes()]);
        footer.encodeTo(block, header);
        RecordFooter decoded = RecordFooter.decode(header, headerBlock, block);
        assertEquals(footer.pageCrc(1999), decoded.pageCrc(1999));
    }
}
