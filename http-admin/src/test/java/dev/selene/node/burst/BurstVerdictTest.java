package dev.selene.node.burst;

import dev.selene.node.workload.ProbeTally;
import dev.selene.node.workload.PublishTally;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The burst's verdict line: what held and what did not. */
class BurstVerdictTest {

    private static BurstReport everythingKept() {
        BurstReport r = new BurstReport();
        r.publish = new PublishTally(12, 12, 0, 0, 0, 0, Map.of(), 0, 12L << 20, 0, 0, 1_000_000);
        r.probe = new ProbeTally(2, 0, 0, 12, 0, 12L << 20, 0, 0, 0.1, 0, java.util.Map.of(), "");
        return r;
    }

    @Test
    void aBurstThatKeptEverything_isOk() {
        assertTrue(everythingKept().verdict().startsWith("verdict: OK: "), everythingKept().verdict());
    }

    /** #23 item 3: records a tier refused and the node dropped are not an OK run. */
    @Test
    void recordsDroppedBecauseTheirDurableWriteFailed_makeTheVerdictNotMet_andAreCounted() {
        BurstReport r = everythingKept();
        r.droppedUnwritable = 24;
        String verdict = r.verdict();
        assertTrue(verdict.startsWith("verdict: NOT MET: "), verdict);
        assertTrue(verdict.contains("24 records dropped from memory because their durable write failed"), verdict);
        assertEquals(24L, r.toMap().get("dropped_unwritable"));
    }

    /** A conversation of which nothing came back says how its restore ended, in the table and the JSON. */
    @Test
    void aConversationRestoredNotAtAll_isCountedByHowItsRestoreEnded_withTheNodesSentence() {
        BurstReport r = everythingKept();
        r.probe = new ProbeTally(1, 0, 2, 6, 0, 6L << 20, 0, 0, 0.1, 0, Map.of("miss", 1L, "failed", 1L),
                "the pool no longer holds it");
        assertTrue(r.verdict().startsWith("verdict: NOT MET: "), r.verdict());
        String row = r.table().lines().filter(l -> l.strip().startsWith("recomputed")).findFirst().orElseThrow();
        assertTrue(row.contains("2  (failed 1, miss 1; the first: the pool no longer holds it)"), row);
        assertEquals(Map.of("failed", 1L, "miss", 1L), r.toMap().get("not_restored"));
    }
}
