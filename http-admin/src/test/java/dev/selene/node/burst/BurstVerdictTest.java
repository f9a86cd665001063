package dev.selene.node.burst;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The burst's verdict line: what held and what did not. */
class BurstVerdictTest {

    private static BurstReport everythingKept() {
        BurstReport r = new BurstReport();
        r.published = 12;
        r.stored = 12;
        r.probe.full = 2;
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
}
