package dev.selene.engine.codec;

import dev.selene.engine.codec.RecordFormatException.Kind;
import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RecordFileFormatTest {

    @Test
    void shareOffsets_areAlignedAndFollowEachOtherRankMajorWithinAPiece() {
        for (Layout layout : new Layout[] {Layout.small(), Layout.deepseekTp4(), Layout.qwenTp1()}) {
            long expected = RecordFileFormat.HEADER_BYTES;
            for (int piece = 0; piece < layout.slotsPerRecord(true); piece++) {
                for (int rank = 0; rank < layout.ranks(); rank++) {
                    long offset = RecordFileFormat.shareOffset(layout, piece, rank);
                    assertEquals(expected, offset);
                    assertEquals(0, offset % 4096);
                    expected += layout.pageBytes();
                }
            }
            assertEquals(expected, RecordFileFormat.footerOffset(layout, true));
        }
    }

    @Test
    void fileLength_isHeaderBodyAndFooter() {
        Layout layout = Layout.small();
        assertEquals(4096 + 5L * 2 * 4096 + 4096, RecordFileFormat.fileLength(layout, true));
        assertEquals(4096 + 2L * 2 * 4096 + 4096, RecordFileFormat.fileLength(layout, false));
        assertEquals(RecordFileFormat.fileLength(layout, true), RecordFileFormat.fileLength(layout, true, 1));
    }

    @Test
    void transferBytes_roundsTheLastRowPieceUpToABlock() {
        Layout layout = Layout.small();
        assertEquals(4096, RecordFileFormat.transferBytes(layout, 3));
        assertEquals(4096, RecordFileFormat.transferBytes(layout, 4));
        Layout wide = new Layout("wide", 1, 4 * 4096, 4096 + 1, 1, 16);
        assertEquals(2 * 4096, RecordFileFormat.transferBytes(wide, 1));
    }

    @Test
    void checkVersion_acceptsEveryKnownVersion_andNamesTheOthers() {
        for (int v = RecordFileFormat.VERSION_OLDEST; v <= RecordFileFormat.VERSION_CURRENT; v++) {
            int version = v;
            assertDoesNotThrow(() -> RecordFileFormat.checkVersion(version));
        }
        assertEquals(Kind.TOO_OLD, assertThrows(RecordFormatException.class,
                () -> RecordFileFormat.checkVersion(0)).kind());
        assertEquals(Kind.TOO_NEW, assertThrows(RecordFormatException.class,
                () -> RecordFileFormat.checkVersion(RecordFileFormat.VERSION_CURRENT + 1)).kind());
    }
}
