package dev.selene.engine.intake;

import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.Test;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IntakeSizingTest {

    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;
    private static final Layout DEEPSEEK = Layout.deepseekTp4();
    private static final long DEEPSEEK_SLOT = DEEPSEEK.slotBytes(); // 256 KiB
    private static final Pattern NEEDS = Pattern.compile("needs (\\d+) MiB");

    @Test
    void compute_isTwoRowsPerRequestTimesConcurrencyPlusTwoWindows() {
        IntakeSizing s = IntakeSizing.compute(DEEPSEEK, 4, 31, GIB, 16 * GIB);

        assertAll(
                () -> assertEquals(2 * 4 * 23 + 2 * 31, s.desiredSlots()),
                () -> assertEquals(246, s.slots()),
                () -> assertEquals(4096, s.warmSlots(), "1 GiB of 256 KiB slots"),
                () -> assertEquals(4096 + 246, s.totalSlots()),
                () -> assertNull(s.warning(), "it fits: no warning"));
    }

    @Test
    void compute_forQwen_usesItsRowOf135Pieces() {
        IntakeSizing s = IntakeSizing.compute(Layout.qwenTp1(), 2, 167, 0, 16 * GIB);

        assertEquals(2 * 2 * 135 + 2 * 167, s.slots());
        assertEquals(0, s.warmSlots());
        assertNull(s.warning());
    }

    @Test
    void compute_withoutARow_isTwoWindows() {
        Layout pagesOnly = new Layout("pages", 1, 4096, 0, 4, 1);

        IntakeSizing s = IntakeSizing.compute(pagesOnly, 64, 5, 0, GIB);

        assertEquals(10, s.desiredSlots());
        assertEquals(10, s.slots());
    }

    @Test
    void compute_whenTheBudgetHoldsExactlyWarmPlusIntake_doesNotWarn() {
        int desired = 2 * 8 * 23 + 2 * 31;

        IntakeSizing s = IntakeSizing.compute(DEEPSEEK, 8, 31, GIB, GIB + desired * DEEPSEEK_SLOT);

        assertEquals(desired, s.slots());
        assertNull(s.warning());
    }

    @Test
    void compute_whenTheBudgetIsShort_shrinksTheIntakeToFitAndWarnsOnce() {
        IntakeSizing s = IntakeSizing.compute(DEEPSEEK, 31, 31, GIB, GIB + 100 * DEEPSEEK_SLOT);

        assertEquals(1488, s.desiredSlots());
        assertEquals(100, s.slots(), "what the budget holds beside the warm tier");
        assertEquals(4096 + 100, s.totalSlots());
        assertNotNull(s.warning());
        assertFalse(s.warning().contains("\n"), "one warning line");
        assertTrue(s.warning().contains("intake shrunk to 100 slots (25 MiB) from the 1488 slots (372 MiB)"),
                s.warning());
        assertTrue(s.warning().contains("needs 1396 MiB in all"), s.warning());
    }

    @Test
    void compute_neverShrinksBelowTwoWindows_evenPastTheBudget() {
        IntakeSizing s = IntakeSizing.compute(DEEPSEEK, 32, 31, 0, MIB);

        assertEquals(62, s.slots());
        assertNotNull(s.warning());
    }

    @Test
    void compute_whenTheWarmTierAloneExceedsTheBudget_keepsTwoWindowsAndWarns() {
        IntakeSizing s = IntakeSizing.compute(DEEPSEEK, 1, 10, 2 * GIB, GIB);

        assertEquals(20, s.slots());
        assertEquals(8192, s.warmSlots());
        assertNotNull(s.warning());
    }

    @Test
    void warning_namesEnoughMemoryThatABudgetOfThatSizeSilencesIt() {
        // 4096 warm + 1534 intake slots of 256 KiB = 1407.5 MiB; the warning must not name less than that.
        IntakeSizing shrunk = IntakeSizing.compute(DEEPSEEK, 32, 31, GIB, GIB + 100 * DEEPSEEK_SLOT);
        Matcher m = NEEDS.matcher(shrunk.warning());
        assertTrue(m.find(), shrunk.warning());
        long namedBytes = Long.parseLong(m.group(1)) * MIB;

        IntakeSizing withNamedBudget = IntakeSizing.compute(DEEPSEEK, 32, 31, GIB, namedBytes);

        assertTrue(namedBytes >= (long) (4096 + 1534) * DEEPSEEK_SLOT,
                "warning names " + m.group(1) + " MiB, the pool needs " + (4096 + 1534) * DEEPSEEK_SLOT + " bytes");
        assertNull(withNamedBudget.warning());
    }

    @Test
    void compute_whenTheFormulaExceedsAnInt_reportsTheDesiredSizeWithoutOverflow() {
        // Largest row on the smallest page at the highest concurrency the config allows: 2^35 + 2 slots wanted.
        Layout huge = new Layout("huge", 1, 4096, 1 << 30, 1, 1);

        IntakeSizing s = IntakeSizing.compute(huge, 65536, 1, 0, 16 * GIB);

        assertEquals(4 * MIB, s.slots(), "the whole 16 GiB budget of 4 KiB slots");
        assertTrue(s.desiredSlots() >= s.slots(),
                "desired " + s.desiredSlots() + " must not be less than granted " + s.slots());
    }

    @Test
    void compute_rejectsNoConcurrencyOrNoWindow() {
        IllegalArgumentException c = assertThrows(IllegalArgumentException.class,
                () -> IntakeSizing.compute(DEEPSEEK, 0, 31, 0, GIB));
        IllegalArgumentException w = assertThrows(IllegalArgumentException.class,
                () -> IntakeSizing.compute(DEEPSEEK, 1, 0, 0, GIB));

        assertEquals("concurrency must be at least 1, was 0", c.getMessage());
        assertEquals("transfer window must be at least 1 slot, was 0", w.getMessage());
    }

    @Test
    void compute_withAWarmTierTooLargeToNumber_isRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> IntakeSizing.compute(Layout.small(), 1, 1, Long.MAX_VALUE, Long.MAX_VALUE));

        assertTrue(e.getMessage().contains("too large"), e.getMessage());
    }
}
