package dev.selene.engine.simulator;

import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceRequest;
import dev.selene.engine.trace.TraceShapes;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
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
    void everyRow_hasEveryPolicyAndTheOracle_theKindsKnownReferenceWhereOneOffRequestsAre_andNoneExceedsTheCeiling() {
        List<PolicyComparison.Trace> traces = PolicyComparison.traces(null, null, 3, 150).stream()
                .filter(t -> t.name().equals("short-chats") || t.name().equals("shared-prompt-chat")).toList();
        List<String> policies = List.of("lru", "worth");
        List<PolicyComparison.Row> rows = new PolicyComparison(RowRule.LAST_FULL, 8).run(traces, policies, r -> { });
        int sizes = PolicyComparison.MEMORY.values().stream().mapToInt(List::size).sum();
        assertEquals(traces.size() * sizes, rows.size());
        for (PolicyComparison.Row r : rows) {
            assertEquals(r.trace().equals("shared-prompt-chat") // the one shape of the two with one-off requests
                    ? List.of("lru", "worth", ReplaySimulator.ORACLE, ReplaySimulator.KINDS_KNOWN)
                    : List.of("lru", "worth", ReplaySimulator.ORACLE), List.copyOf(r.hitRatio().keySet()));
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
        assertTrue(table.lines().anyMatch(l -> l.startsWith("| short-chats (tuned on) |") && l.endsWith(" - |")),
                "no reference where nothing is one-off: " + table);
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

    @Test
    void tracesOverSeeds_nameTheirSeed_andTakeTheFileOnce() {
        List<PolicyComparison.Trace> one = PolicyComparison.traces("synthetic_trace", List.of(), 5, 10);
        List<PolicyComparison.Trace> three = PolicyComparison.traces("synthetic_trace", List.of(), 5, 7, 10);
        assertEquals(1 + 3 * (one.size() - 1), three.size(), "the file once, each seed's generated traces");
        assertEquals("synthetic_trace", three.getFirst().name());
        assertEquals("seed 5, " + one.get(1).name(), three.get(1).name());
        assertEquals("seed 7, " + one.getLast().name(), three.getLast().name());
        for (int i = 1; i < three.size(); i++) {
            assertEquals(one.get(1 + (i - 1) % (one.size() - 1)).tuned(), three.get(i).tuned(), three.get(i).name());
        }
        assertEquals(drawn(TraceShapes.generate("short-chats", 6, 10)), drawn(three.stream()
                .filter(t -> t.name().equals("seed 6, short-chats")).findFirst().orElseThrow().requests().get()),
                "each seed's traces are drawn from that seed");
        assertNotEquals(drawn(TraceShapes.generate("short-chats", 5, 10)),
                drawn(TraceShapes.generate("short-chats", 6, 10)), "seeds draw different traces");
    }

    /** What a request list holds, comparable by value (a request's block ids are an array). */
    private static List<String> drawn(List<TraceRequest> requests) {
        return requests.stream().map(r -> r.timestampMillis() + " " + r.inputLength() + " " + r.outputLength() + " "
                + Arrays.toString(r.hashIds())).toList();
    }

    @Test
    void breaches_listARowMoreThanAPointBelowLru_andAHeldOutRowUnder70PercentOfTheOracle_andNothingElse() {
        List<PolicyComparison.Row> rows = List.of(
                row("a", false, 0.50, 0.485, 0.60), // -1.5 points, and 0.81 of the oracle
                row("b", true, 0.50, 0.495, 0.80), // -0.5 points, 0.62 of the oracle but tuned on
                row("c", false, 0.50, 0.52, 0.80), // +2 points, 0.65 of an oracle 30 points above lru
                row("d", false, 0.50, 0.52, 0.54), // 0.96 of an oracle only 4 points above lru
                row("e", true, 0.50, 0.48, 0.90), // -2 points, tuned on: still a loss to lru
                row("f", false, 0.50, 0.52, 0.80, 0.60)); // 0.65 of the oracle; knowing the kinds 0.75 of it
        List<String> broken = PolicyComparison.breaches(rows, "worth");
        assertEquals(List.of("a, qwen-tp1, 1.0 GiB: -1.50 points against lru",
                "c, qwen-tp1, 1.0 GiB: 0.650 of the oracle (lru 0.625)",
                "e, qwen-tp1, 1.0 GiB: -2.00 points against lru (tuned on)",
                "f, qwen-tp1, 1.0 GiB: 0.650 of the oracle (lru 0.625, kinds-known 0.750)"), broken);
        String summary = PolicyComparison.summary(rows, List.of("worth"));
        assertTrue(summary.contains("under 0.7 on 2 rows (1 of them where kinds-known reaches 0.7)"), summary);
        String means = PolicyComparison.means(rows, List.of("lru", "worth"));
        assertEquals("lru: mean over lru +0.00 points held out (4 rows), +0.00 tuned on (2 rows)\n"
                + "worth: mean over lru +1.13 points held out (4 rows), -1.25 tuned on (2 rows)\n", means);
    }

    private static PolicyComparison.Row row(String trace, boolean tuned, double lru, double worth, double oracle) {
        return new PolicyComparison.Row(trace, tuned, "qwen-tp1", 1L << 30, 0, 1,
                Map.of("lru", lru, "worth", worth, ReplaySimulator.ORACLE, oracle));
    }

    private static PolicyComparison.Row row(String trace, boolean tuned, double lru, double worth, double oracle,
                                            double kindsKnown) {
        return new PolicyComparison.Row(trace, tuned, "qwen-tp1", 1L << 30, 0, 1, Map.of("lru", lru, "worth", worth,
                ReplaySimulator.ORACLE, oracle, ReplaySimulator.KINDS_KNOWN, kindsKnown));
    }
}
