package dev.selene.engine.simulator;

import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.policy.Policies;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceCeiling;
import dev.selene.engine.trace.TraceRequest;
import dev.selene.engine.trace.TraceShapes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The simulator over generated traces: the oracle bounds the policies, reuse and worth hold their own against LRU,
 * and nothing exceeds the unbounded ceiling.
 */
class ReplaySimulatorTest {

    private static ReplaySimulator simulator(long warmMiB) {
        return new ReplaySimulator(CacheConfig.memoryOnly(Layout.qwenTp1(), warmMiB << 20).withConcurrency(8),
                RowRule.LAST_FULL);
    }

    @ParameterizedTest
    @ValueSource(strings = {"system-prompts", "short-chats", "agent-loops"})
    void theOracle_servesAtLeastEveryPolicy_andNothingExceedsTheCeiling(String shape) {
        List<TraceRequest> trace = TraceShapes.generate(shape, 7, 500);
        ReplaySimulator sim = simulator(256);
        double oracle = sim.run(trace, ReplaySimulator.ORACLE).hitRatio();
        double ceiling = TraceCeiling.of(trace, RowRule.LAST_FULL).rowCeiling();
        assertTrue(oracle <= ceiling + 1e-12, shape + ": oracle " + oracle + " above the ceiling " + ceiling);
        for (String policy : Policies.NAMES) {
            double hit = sim.run(trace, policy).hitRatio();
            assertTrue(hit <= oracle, shape + ": " + policy + " " + hit + " above the oracle " + oracle);
            assertTrue(hit > 0, shape + ": " + policy + " hit nothing");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"system-prompts", "short-chats", "agent-loops"})
    void reuseAndWorth_areNeverMoreThanAPointBelowLru(String shape) {
        List<TraceRequest> trace = TraceShapes.generate(shape, 7, 1000);
        for (long warm : new long[] {128, 512}) {
            ReplaySimulator sim = simulator(warm);
            double lru = sim.run(trace, "lru").hitRatio();
            for (String policy : List.of("reuse", "worth")) {
                double hit = sim.run(trace, policy).hitRatio();
                assertTrue(hit >= lru - 0.01, shape + " at " + warm + " MiB: " + policy + " " + hit + ", lru " + lru);
            }
        }
    }

    @Test
    void withEnoughMemory_everyPolicyReachesTheCeiling() {
        List<TraceRequest> trace = TraceShapes.generate("short-chats", 3, 300);
        double ceiling = TraceCeiling.of(trace, RowRule.LAST_FULL).rowCeiling();
        ReplaySimulator sim = simulator(8192);
        for (String policy : List.of("lru", "reuse", "worth", ReplaySimulator.ORACLE)) {
            SimulationResult r = sim.run(trace, policy);
            assertEquals(ceiling, r.hitRatio(), 1e-12, policy);
            assertEquals(0, r.evicted(), policy);
            assertEquals(r.published(), r.stored() + r.present(), policy);
        }
    }

    @Test
    void aReplay_isDeterministic() {
        List<TraceRequest> trace = TraceShapes.generate("agent-loops", 11, 300);
        ReplaySimulator sim = simulator(128);
        for (String policy : List.of("lru", "reuse", "worth", ReplaySimulator.ORACLE)) {
            assertEquals(sim.run(trace, policy), sim.run(trace, policy), policy);
        }
    }

    @Test
    void aNodeWithAPoolTier_isRefused() {
        CacheConfig pool = CacheConfig.memoryOnly(Layout.qwenTp1(), 1L << 30).withPool(List.of("127.0.0.1:1"));
        assertThrows(IllegalArgumentException.class, () -> new ReplaySimulator(pool, RowRule.LAST_FULL));
    }
}
