package dev.selene.engine.simulator;

import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceShapes;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The comparison: every policy and the oracle on every trace, layout and memory size, tuned-on traces marked. */
class PolicyComparisonTest {

    @Test
    void theTraces_includeEveryShape_andTheFamilies_andMarkOnlyTheTunedOnes() {
        List<PolicyComparison.Trace> traces = PolicyComparison.traces("synthetic_trace", List.of(), 1, 10);
        List<String> names = traces.stream().map(PolicyComparison.Trace::name).toList();
        assertTrue(names.containsAll(TraceShapes.NAMES), names.toString());
        assertTrue(names.contains("synthetic_trace"), names.toString());
        assertTrue(names.stream().filter(n -> n.startsWith("chat")).count() >= 9, "the chat families: " + names);
        for (PolicyComparison.Trace t : traces) {
            assertEquals(PolicyComparison.TUNED_ON.contains(t.name()), t.tuned(), t.name());
        }
        assertFalse(traces.stream().filter(t -> !t.tuned()).toList().isEmpty(), "some traces are held out");
    }

    @Test
    void everyRow_hasEveryPolicyAndTheOracle_andNoneExceedsTheCeiling() {
        List<PolicyComparison.Trace> traces = PolicyComparison.traces(null, null, 3, 150).stream()
                .filter(t -> t.name().equals("short-chats") || t.name().equals("shared-prompt-chat")).toList();
        List<String> policies = List.of("lru", "worth");
        List<PolicyComparison.Row> rows = new PolicyComparison(RowRule.LAST_FULL, 8).run(traces, policies, r -> { });
        int sizes = PolicyComparison.MEMORY.values().stream().mapToInt(List::size).sum();
        assertEquals(traces.size() * sizes, rows.size());
        for (PolicyComparison.Row r : rows) {
            assertEquals(List.of("lru", "worth", ReplaySimulator.ORACLE), List.copyOf(r.hitRatio().keySet()));
            for (double hit : r.hitRatio().values()) {
                assertTrue(hit <= r.ceiling() + 1e-12, r.toString());
            }
            assertEquals(0, r.pointsOverLru("lru"), 0);
        }
        String table = PolicyComparison.table(rows, policies);
        assertTrue(table.contains("| shared-prompt-chat | qwen-tp1 |"), table);
        assertTrue(table.contains("| short-chats (tuned on) | deepseek-tp4 |"), table);
        assertEquals(rows.size() + 2, table.lines().count(), "a header, a rule and a line per row");
        String summary = PolicyComparison.summary(rows, policies);
        assertTrue(summary.startsWith("lru: worst against lru +0.0 points"), summary);
        assertTrue(summary.contains("worth: worst against lru"), summary);
    }

    @Test
    void withADiskSize_everyRowHasTheDisk_andTheOracleKnowsBothTiers() {
        List<PolicyComparison.Trace> traces = PolicyComparison.traces(null, null, 3, 300).stream()
                .filter(t -> t.name().equals("short-chats")).toList();
        List<String> policies = List.of("lru", "worth");
        List<PolicyComparison.Row> memoryOnly = new PolicyComparison(RowRule.LAST_FULL, 8).run(traces, policies,
                r -> { });
        List<PolicyComparison.Row> rows = new PolicyComparison(RowRule.LAST_FULL, 8, 4L << 30).run(traces, policies,
                r -> { });
        for (int i = 0; i < rows.size(); i++) {
            PolicyComparison.Row r = rows.get(i);
            assertEquals(4L << 30, r.diskBytes());
            assertEquals(0, memoryOnly.get(i).diskBytes());
            double oracle = r.hitRatio().get(ReplaySimulator.ORACLE);
            assertTrue(oracle >= memoryOnly.get(i).hitRatio().get(ReplaySimulator.ORACLE), r + " / " + memoryOnly.get(i));
            for (String p : policies) {
                assertTrue(r.hitRatio().get(p) <= oracle, p + ": " + r);
                assertTrue(r.hitRatio().get(p) >= memoryOnly.get(i).hitRatio().get(p), p + " gains from the disk: " + r);
            }
        }
        String table = PolicyComparison.table(rows, policies);
        assertTrue(table.contains("| short-chats (tuned on) | qwen-tp1 | 1.0 GiB + 4.0 GiB disk |"), table);
    }
}
