package dev.selene.engine.codec;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChainCompletenessTest {

    private static RecordKey key(long hash) {
        return new RecordKey("ns", hash);
    }

    private static RecordSpec spec(long hash, Long parent) {
        return new RecordSpec(key(hash), parent == null ? null : key(parent), true);
    }

    @Test
    void incomplete_isEveryRecordBelowAMissingAncestor() {
        List<RecordSpec> specs = List.of(spec(1, null), spec(2, 1L), spec(3, 2L), spec(5, 4L), spec(6, 5L));
        assertEquals(Set.of(key(5), key(6)), ChainCompleteness.incomplete(specs));
    }

    @Test
    void incomplete_countsAParentCompleteInAnotherTier() {
        List<RecordSpec> specs = List.of(spec(5, 4L), spec(6, 5L), spec(8, 7L));
        assertEquals(Set.of(key(8)), ChainCompleteness.incomplete(specs, k -> k.equals(key(4))));
    }

    @Test
    void incomplete_treatsACycleAsIncomplete() {
        List<RecordSpec> specs = List.of(spec(1, 2L), spec(2, 1L), spec(3, null));
        assertEquals(Set.of(key(1), key(2)), ChainCompleteness.incomplete(specs));
    }

    @Test
    void incomplete_handlesVeryDeepChainsWithoutRecursion() {
        List<RecordSpec> specs = new ArrayList<>();
        specs.add(spec(0, null));
        for (long i = 1; i < 200_000; i++) {
            specs.add(spec(i, i - 1));
        }
        assertTrue(ChainCompleteness.incomplete(specs).isEmpty());
        specs.removeFirst();
        assertEquals(199_999, ChainCompleteness.incomplete(specs).size());
    }
}
