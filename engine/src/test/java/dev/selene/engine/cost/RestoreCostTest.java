package dev.selene.engine.cost;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RestoreCostTest {

    @Test
    void refuse_whenTheEstimateExceedsTheRecomputeEstimate() {
        assertTrue(RestoreCost.refuse(200_000_001, 200_000_000));
    }

    @Test
    void restore_whenTheEstimateIsBelowOrEqualToTheRecomputeEstimate() {
        assertAll(
                () -> assertFalse(RestoreCost.refuse(199_999_999, 200_000_000)),
                () -> assertFalse(RestoreCost.refuse(200_000_000, 200_000_000), "a tie restores"),
                () -> assertFalse(RestoreCost.refuse(0, 0), "nothing to move, nothing to recompute"));
    }

    @Test
    void refuse_aRestoreThatSaturatedTheEstimate() {
        assertTrue(RestoreCost.refuse(Long.MAX_VALUE, Long.MAX_VALUE - 1));
    }

    @Test
    void refuse_rejectsNegativeTimes_namingWhich() {
        assertAll(
                () -> assertTrue(assertThrows(IllegalArgumentException.class, () -> RestoreCost.refuse(-1, 5))
                        .getMessage().startsWith("estimateNanos = -1 is invalid")),
                () -> assertTrue(assertThrows(IllegalArgumentException.class, () -> RestoreCost.refuse(5, -1))
                        .getMessage().startsWith("recomputeNanos = -1 is invalid")));
    }
}
