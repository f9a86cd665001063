package dev.selene.engine.simulator;

import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.cost.PrefillCost;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.policy.Policies;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceRequest;
import dev.selene.engine.trace.TraceShapes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The simulator's disk tier: what memory drops was spilled and is found on disk, a full disk deletes its least
 * recently used files, a disk hit's tokens and bytes (and its refusal when the read would be slower than
 * recomputing), and the oracle with a disk above the memory-only oracle and every policy with the same disk.
 */
class ReplaySimulatorDiskTest {

    private static final Layout QWEN = Layout.qwenTp1();
    private static final int BLOCKS = 4;

    private static CacheConfig memory(long warmMiB) {
        return CacheConfig.memoryOnly(QWEN, warmMiB << 20).withConcurrency(1);
    }

    private static CacheConfig withDisk(long warmMiB, long diskMiB) {
        return memory(warmMiB).withDisk("simulated", diskMiB << 20);
    }

    /** Request 0 is chain A (four full blocks, a row at the last); then {@code others} distinct chains; then A. */
    private static List<TraceRequest> aThenOthersThenA(int others) {
        List<TraceRequest> trace = new ArrayList<>();
        trace.add(chain(0, 1));
        for (int i = 1; i <= others; i++) {
            trace.add(chain(i, 1_000L * i + 1));
        }
        trace.add(chain(others + 1, 1));
        return trace;
    }

    private static TraceRequest chain(long at, long firstId) {
        long[] ids = new long[BLOCKS];
        for (int b = 0; b < BLOCKS; b++) {
            ids[b] = firstId + b;
        }
        return new TraceRequest(at, BLOCKS * TraceRequest.BLOCK_TOKENS, 1, ids);
    }

    private static final int A_TOKENS = BLOCKS * TraceRequest.BLOCK_TOKENS;

    @Test
    void aRecordDroppedFromMemory_isFoundOnDisk() {
        List<TraceRequest> trace = aThenOthersThenA(60); // 60 chains of 4.6 MiB: far more than 64 MiB of memory
        SimulationResult memoryOnly = new ReplaySimulator(memory(64), RowRule.LAST_FULL).run(trace, "lru");
        assertEquals(0, memoryOnly.tokensFromCache(), "memory alone lost A: " + memoryOnly);
        SimulationResult r = new ReplaySimulator(withDisk(64, 1024), RowRule.LAST_FULL).run(trace, "lru");
        assertTrue(r.evicted() > 0, "memory dropped records: " + r);
        assertTrue(r.spilled() >= r.evicted(), "every record dropped was written first: " + r);
        assertEquals(A_TOKENS, r.tokensFromCache(), "A's second request is served whole: " + r);
        assertEquals(A_TOKENS, r.tokensFromDisk(), "from disk: " + r);
        assertEquals(1, r.restoresFromDisk());
        assertEquals(0, r.evictedFromDisk(), "a disk of 1 GiB holds every chain: " + r);
    }

    @Test
    void aFullDisk_deletesItsLeastRecentlyUsedFiles() {
        List<TraceRequest> trace = aThenOthersThenA(60);
        SimulationResult r = new ReplaySimulator(withDisk(64, 128), RowRule.LAST_FULL).run(trace, "lru");
        assertTrue(r.spilled() > 0, r.toString());
        assertTrue(r.evictedFromDisk() > 0, "a 128 MiB disk deleted files for room: " + r);
        assertEquals(0, r.tokensFromCache(), "A, the least recently used, left the disk too: " + r);
        // The same trace with A used again in the middle: A stays the most recently used on disk and is found.
        List<TraceRequest> reused = new ArrayList<>(trace.subList(0, 30));
        reused.add(chain(30, 1));
        for (int i = 31; i < trace.size(); i++) {
            reused.add(chain(i, 1_000L * i + 7));
        }
        reused.add(chain(trace.size(), 1));
        SimulationResult kept = new ReplaySimulator(withDisk(64, 128), RowRule.LAST_FULL).run(reused, "lru");
        assertTrue(kept.tokensFromDisk() >= A_TOKENS, "A, used again, was kept on disk: " + kept);
    }

    @Test
    void aDiskHit_readsItsRecordsBytes_andIsRefusedWhenTheReadIsSlowerThanRecomputing() {
        List<TraceRequest> trace = aThenOthersThenA(60);
        SimulationResult r = new ReplaySimulator(withDisk(64, 1024), RowRule.LAST_FULL).run(trace, "lru");
        long aBytes = (BLOCKS - 1) * QWEN.recordBytes(false) + QWEN.recordBytes(true);
        assertEquals(aBytes, r.bytesFromDisk(), r.toString());
        assertEquals(r.bytesRestored(), r.bytesFromDisk(), "nothing else was restored: " + r);
        assertEquals(0, r.restoresRefused());
        // A disk read at 1 MB/s takes 2.6 s for A's 2.6 MB, longer than prefilling its 2,048 tokens at 10,000/s.
        PrefillCost slowDisk = PrefillCost.withPrefill(10_000).withDisk(1e6);
        SimulationResult refused = new ReplaySimulator(withDisk(64, 1024), RowRule.LAST_FULL, slowDisk)
                .run(trace, "lru");
        assertEquals(1, refused.restoresRefused(), refused.toString());
        assertEquals(0, refused.tokensFromCache(), refused.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"system-prompts", "short-chats", "agent-loops"})
    void theOracleWithADisk_servesAtLeastTheMemoryOnlyOracle_andEveryPolicyWithTheSameDisk(String shape) {
        List<TraceRequest> trace = TraceShapes.generate(shape, 7, 500);
        double memoryOracle = new ReplaySimulator(memory(128), RowRule.LAST_FULL).run(trace, ReplaySimulator.ORACLE)
                .hitRatio();
        ReplaySimulator sim = new ReplaySimulator(withDisk(128, 256), RowRule.LAST_FULL);
        double oracle = sim.run(trace, ReplaySimulator.ORACLE).hitRatio();
        assertTrue(oracle >= memoryOracle, shape + ": oracle with disk " + oracle + " below memory only "
                + memoryOracle);
        for (String policy : Policies.NAMES) {
            SimulationResult r = sim.run(trace, policy);
            assertTrue(r.hitRatio() <= oracle, shape + ": " + policy + " " + r.hitRatio() + " above the oracle "
                    + oracle);
            assertTrue(r.tokensFromDisk() > 0, shape + ": " + policy + " read nothing from disk: " + r);
        }
    }

    @Test
    void aDiskReplay_isDeterministic() {
        List<TraceRequest> trace = TraceShapes.generate("agent-loops", 11, 300);
        ReplaySimulator sim = new ReplaySimulator(withDisk(64, 256), RowRule.LAST_FULL);
        for (String policy : List.of("lru", "reuse", "worth", ReplaySimulator.ORACLE)) {
            assertEquals(sim.run(trace, policy), sim.run(trace, policy), policy);
        }
    }
}
