package dev.selene.node.replay;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The learning policies in a real node: the node and the simulator give the same hit ratio on a short trace, and the
 * default adds and drops rows apart from their pages as the simulator does.
 */
class ReplayPolicyTest {

    /**
     * How far the node may be from the simulator where rows are dropped apart from their pages: the node copies a
     * request's records at once, so which of them are resident when an eviction runs depends on timing (the parent
     * of a record still being copied is held; once it is resident its row may go). Measured: equal to the digit in
     * most runs, one row drop apart in some; one row drop moves the system-prompts trace below by 0.0031 (0.6585
     * against 0.6616, in 2 of 10 runs once worth ranked rows again as its class shares moved); the agent-loops trace
     * below read 0.0638 against 0.0697 in about one run in five, on the code before and after the deep-chain spill
     * planning alike. Still well under the point (0.0741 against 0.0642) the parent pinning took away.
     */
    private static final double TIMING = 0.007;

    @ParameterizedTest
    @ValueSource(strings = {"reuse", "worth"})
    void underEachPolicy_theNodeAndTheSimulatorAgree(String policy) throws IOException {
        JsonNode r = ReplayTest.replay(ReplayTest.TRACE.toString(), "--warm", "256m", "--policy", policy);
        assertEquals(policy, r.get("policy").asText());
        assertEquals("last-full", r.get("rows").asText());
        assertTrue(r.get("hit_ratio").asDouble() > 0, r.toString());
        assertEquals(r.get("simulated_hit_ratio").asDouble(), r.get("hit_ratio").asDouble(), 0.0, r.toString());
    }

    /**
     * Agent loops in 64 MiB under the default: the node copies a request's records at once and they become resident in
     * any order; the parent of a record being copied must stay meanwhile, or an eviction in between drops it in the
     * node but not in the simulator (which makes each record resident before the next): they differed by a point here
     * (7.41% against 6.42%) before the catalog held such parents; now they agree to the digit in most runs.
     */
    @Test
    void underTheDefault_theParentOfARecordBeingCopiedStays_soTheNodeMatchesTheSimulator() throws IOException {
        JsonNode r = ReplayTest.replay("--generate", "agent-loops", "--seed", "3", "--requests", "300",
                "--warm", "64m");
        assertTrue(r.get("rows_dropped").asLong() > 0, r.toString());
        assertEquals(r.get("simulated_hit_ratio").asDouble(), r.get("hit_ratio").asDouble(), TIMING, r.toString());
    }

    /**
     * A generated trace on which the default policy both adds rows to records held without one and drops rows while
     * their pages stay: the node does both as the simulator does (the same rows added, the drops and hit ratio within
     * what timing moves).
     */
    @Test
    void underTheDefault_rowsJoinAndLeaveRecordsInTheNodeAsInTheSimulator() throws IOException {
        String[] trace = {"--generate", "system-prompts", "--seed", "3", "--requests", "400", "--warm", "128m"};
        JsonNode r = ReplayTest.replay(trace);
        assertEquals("worth", r.get("policy").asText());
        assertTrue(r.get("rows_added").asLong() > 0, "some rows joined held records: " + r);
        assertTrue(r.get("rows_dropped").asLong() > 0, "some rows left while their pages stayed: " + r);
        assertEquals(r.get("simulated_rows_added").asLong(), r.get("rows_added").asLong(), r.toString());
        assertEquals(r.get("simulated_rows_dropped").asLong(), r.get("rows_dropped").asLong(), 2, r.toString());
        assertEquals(r.get("simulated_hit_ratio").asDouble(), r.get("hit_ratio").asDouble(), TIMING, r.toString());
        String[] underLru = Arrays.copyOf(trace, trace.length + 2);
        underLru[trace.length] = "--policy";
        underLru[trace.length + 1] = "lru";
        JsonNode lru = ReplayTest.replay(underLru);
        assertEquals(0, lru.get("rows_dropped").asLong(), "LRU drops a record's row only with the record");
    }
}
