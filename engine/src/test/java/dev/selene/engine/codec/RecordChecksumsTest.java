package dev.selene.engine.codec;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordChecksumsTest {

    @Test
    void rowCrc_isIndependentOfHowManySlotsTheRowUsed() {
        int rowBytes = 3 * 4096 + 1234;
        Layout smallPages = new Layout("a", 2, 4096, rowBytes, 1, 16);
        Layout largePages = new Layout("b", 2, 3 * 4096, rowBytes, 1, 16);
        assertEquals(4, smallPages.rowPieces());
        assertEquals(2, largePages.rowPieces());
        TestShares a = rowOnly(smallPages, 7);
        TestShares b = rowOnly(largePages, 7);
        assertEquals(RecordChecksums.of(smallPages, true, a).rowCrc(),
                RecordChecksums.of(largePages, true, b).rowCrc());
    }

    @Test
    void rowCrc_ignoresBytesPastTheUsedEnd() {
        Layout layout = Layout.small();
        int clean = RecordChecksums.of(layout, true, new TestShares(layout, true).fill(3, (byte) 0)).rowCrc();
        int dirty = RecordChecksums.of(layout, true, new TestShares(layout, true).fill(3, (byte) 0x5A)).rowCrc();
        assertEquals(clean, dirty);
    }

    @Test
    void pageCrc_changesWhenAnyRankChanges() {
        Layout layout = Layout.small();
        TestShares shares = new TestShares(layout, false).fill(11, (byte) 0);
        int before = RecordChecksums.of(layout, false, shares).pageCrc(1);
        shares.share(1, 1).set(ValueLayout.JAVA_BYTE, 4095, (byte) (shares.share(1, 1).get(ValueLayout.JAVA_BYTE, 4095) ^ 1));
        RecordChecksums after = RecordChecksums.of(layout, false, shares);
        assertNotEquals(before, after.pageCrc(1));
        assertEquals(0, after.rowCrc());
    }

    @Test
    void update_rankOutOfOrderWithinAPage_isRejected() {
        Layout layout = Layout.small();
        TestShares shares = new TestShares(layout, true);
        RecordChecksums sums = new RecordChecksums(layout, true);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> sums.update(0, 1, shares.share(0, 1)));
        assertTrue(e.getMessage().contains("rank 0 first"), e.getMessage());
    }

    @Test
    void update_ranksMayInterleaveInRowPieces() {
        Layout layout = Layout.small();
        TestShares shares = new TestShares(layout, true).fill(5, (byte) 0);
        RecordChecksums rankMajor = new RecordChecksums(layout, true);
        for (int page = 0; page < layout.pagesPerRecord(); page++) {
            for (int rank = 0; rank < layout.ranks(); rank++) {
                rankMajor.update(page, rank, shares.share(page, rank));
            }
        }
        for (int rank = 0; rank < layout.ranks(); rank++) {
            for (int piece = layout.pagesPerRecord(); piece < layout.slotsPerRecord(true); piece++) {
                rankMajor.update(piece, rank, shares.share(piece, rank));
            }
        }
        assertTrue(rankMajor.isComplete());
        assertEquals(RecordChecksums.of(layout, true, shares).rowCrc(), rankMajor.rowCrc());
    }

    @Test
    void incompleteChecksums_refuseToAnswer() {
        Layout layout = Layout.small();
        RecordChecksums sums = new RecordChecksums(layout, true);
        sums.update(0, 0, new TestShares(layout, true).share(0, 0));
        assertFalse(sums.isComplete());
        assertThrows(IllegalStateException.class, () -> sums.pageCrc(0));
        assertThrows(IllegalStateException.class, sums::rowCrc);
    }

    @Test
    void version1_streamsWholePagesInFileOrder() {
        Layout layout = Layout.small();
        RecordHeader header = new RecordHeader(1, layout, new RecordSpec(
                new RecordKey("ns", 1), null, true));
        MemorySegment block = MemorySegment.ofArray(header.toBytes());
        TestShares clean = new TestShares(layout, true).fill(9, (byte) 0);
        TestShares padded = new TestShares(layout, true).fill(9, (byte) 1);
        RecordChecksums a = RecordChecksums.forFile(header, block);
        a.updateAll(clean);
        RecordChecksums b = RecordChecksums.forFile(header, block);
        b.updateAll(padded);
        assertNotEquals(a.wholeCrc(), b.wholeCrc(), "version 1 covers the padding");
        RecordChecksums c = RecordChecksums.forFile(header, block);
        assertThrows(IllegalStateException.class, () -> c.update(1, 0, clean.share(1, 0)));
        assertThrows(IllegalStateException.class, () -> a.pageCrc(0));
    }

    private static TestShares rowOnly(Layout layout, long seed) {
        TestShares shares = new TestShares(layout, true);
        for (int rank = 0; rank < layout.ranks(); rank++) {
            int offsetInRow = 0;
            for (int piece = layout.pagesPerRecord(); piece < layout.slotsPerRecord(true); piece++) {
                MemorySegment share = shares.share(piece, rank);
                share.fill((byte) (0x30 + piece));
                for (int i = 0; i < layout.pieceBytes(piece); i++) {
                    share.set(ValueLayout.JAVA_BYTE, i, TestShares.patternByte(seed, 0, rank, offsetInRow++));
                }
            }
        }
        return shares;
    }
}
