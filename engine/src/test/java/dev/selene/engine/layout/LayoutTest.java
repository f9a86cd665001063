package dev.selene.engine.layout;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LayoutTest {

    @Test
    void deepseekTp4_hasARowOf23PagesOnFourRanks() {
        Layout l = Layout.deepseekTp4();

        assertAll(
                () -> assertEquals("deepseek-tp4", l.name()),
                () -> assertEquals(4, l.ranks()),
                () -> assertEquals(23, l.rowPieces()),
                () -> assertEquals(8 + 23, l.slotsPerRecord(true)),
                () -> assertEquals(8, l.slotsPerRecord(false)),
                () -> assertEquals(4L * 64 * 1024, l.slotBytes()),
                () -> assertEquals(512, l.tokensPerRecord()));
    }

    @Test
    void qwenTp1_hasARowOf135PagesOnOneRank() {
        Layout l = Layout.qwenTp1();

        assertAll(
                () -> assertEquals("qwen-tp1", l.name()),
                () -> assertEquals(1, l.ranks()),
                () -> assertEquals(135, l.rowPieces()),
                () -> assertEquals(32 + 135, l.slotsPerRecord(true)),
                () -> assertEquals(16L * 1024, l.slotBytes()),
                () -> assertEquals(512, l.tokensPerRecord()));
    }

    @Test
    void rowPieces_isTheCeilingOfRowBytesOverPageBytes() {
        assertEquals(0, new Layout("c", 1, 4096, 0, 1, 1).rowPieces());
        assertEquals(1, new Layout("c", 1, 4096, 1, 1, 1).rowPieces());
        assertEquals(1, new Layout("c", 1, 4096, 4096, 1, 1).rowPieces());
        assertEquals(2, new Layout("c", 1, 4096, 4097, 1, 1).rowPieces());
        assertEquals(3, Layout.small().rowPieces());
    }

    @Test
    void pieceBytes_ofPagesAndFullRowPieces_isAPage() {
        Layout small = Layout.small();

        assertEquals(4096, small.pieceBytes(0));
        assertEquals(4096, small.pieceBytes(1));
        assertEquals(4096, small.pieceBytes(2), "first row piece");
        assertEquals(4096, small.pieceBytes(3), "second row piece");
    }

    @Test
    void pieceBytes_ofTheLastPartialRowPiece_isTheRemainder() {
        Layout small = Layout.small();

        assertEquals(100, small.pieceBytes(small.slotsPerRecord(true) - 1));
    }

    @Test
    void pieceBytes_ofALastRowPieceThatFillsItsSlot_isAWholePage() {
        Layout l = Layout.deepseekTp4();

        assertEquals(64 * 1024, l.pieceBytes(l.slotsPerRecord(true) - 1));
    }

    @Test
    void pieceBytes_summedOverEveryPiece_isOneRanksShareOfTheRecord() {
        for (Layout l : new Layout[] {Layout.small(), Layout.deepseekTp4(), Layout.qwenTp1(),
                new Layout("odd", 3, 8192, 12_345, 5, 7)}) {
            long sum = 0;
            for (int p = 0; p < l.slotsPerRecord(true); p++) {
                sum += l.pieceBytes(p);
            }
            assertEquals(l.recordBytes(true), sum * l.ranks(), l.name());
        }
    }

    @Test
    void recordBytes_countsOnlyTheUsedPartOfTheLastRowPiece() {
        Layout small = Layout.small();

        assertEquals(2L * (2 * 4096 + 2 * 4096 + 100), small.recordBytes(true));
        assertEquals(2L * 2 * 4096, small.recordBytes(false));
    }

    @Test
    void preset_findsEveryPresetByNameIgnoringCase() {
        assertEquals(Layout.deepseekTp4(), Layout.preset("deepseek-tp4"));
        assertEquals(Layout.deepseekTp4(), Layout.preset("DeepSeek-TP4"));
        assertEquals(Layout.qwenTp1(), Layout.preset("qwen-tp1"));
        assertEquals(Layout.small(), Layout.preset("small"));
        for (String name : Layout.PRESETS) {
            assertEquals(name, Layout.preset(name).name());
        }
    }

    @Test
    void preset_ofAnUnknownName_namesTheAllowedValues() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Layout.preset("llama"));

        assertEquals("layout 'llama' is unknown; allowed: deepseek-tp4, qwen-tp1, small", e.getMessage());
    }

    static Stream<Arguments> invalidLayouts() {
        return Stream.of(
                Arguments.of("layout.ranks", (Executable) () -> new Layout("x", 0, 4096, 0, 1, 1)),
                Arguments.of("layout.ranks", (Executable) () -> new Layout("x", 65, 4096, 0, 1, 1)),
                Arguments.of("layout.page-bytes", (Executable) () -> new Layout("x", 1, 4095, 0, 1, 1)),
                Arguments.of("layout.page-bytes", (Executable) () -> new Layout("x", 1, 5000, 0, 1, 1)),
                Arguments.of("layout.page-bytes", (Executable) () -> new Layout("x", 1, (64 << 20) + 4096, 0, 1, 1)),
                Arguments.of("layout.row-bytes", (Executable) () -> new Layout("x", 1, 4096, -1, 1, 1)),
                Arguments.of("layout.row-bytes", (Executable) () -> new Layout("x", 1, 4096, (1 << 30) + 1, 1, 1)),
                Arguments.of("layout.pages-per-record", (Executable) () -> new Layout("x", 1, 4096, 0, 0, 1)),
                Arguments.of("layout.pages-per-record", (Executable) () -> new Layout("x", 1, 4096, 0, 4097, 1)),
                Arguments.of("layout.tokens-per-page", (Executable) () -> new Layout("x", 1, 4096, 0, 1, 0)),
                Arguments.of("layout.tokens-per-page", (Executable) () -> new Layout("x", 1, 4096, 0, 1, 65537)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidLayouts")
    void constructor_withAnInvalidValue_namesTheSettingAndTheAllowedValues(String setting, Executable create) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, create);

        assertTrue(e.getMessage().startsWith(setting + " = "), e.getMessage());
        assertTrue(e.getMessage().contains("is invalid; allowed: "), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {4096, 8192, 64 << 20})
    void constructor_acceptsEveryAlignedPageSizeInRange(int pageBytes) {
        assertEquals(pageBytes, new Layout("x", 1, pageBytes, 0, 1, 1).pageBytes());
    }

    @Test
    void constructor_acceptsTheLargestRowOnTheSmallestPage() {
        Layout l = new Layout("x", 64, 4096, 1 << 30, 4096, 65536);

        assertEquals((1 << 30) / 4096, l.rowPieces());
    }
}
