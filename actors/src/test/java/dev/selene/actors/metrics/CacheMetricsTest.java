package dev.selene.actors.metrics;

import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.AbandonReason;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RetryReason;
import dev.selene.actors.value.Tier;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A node's instruments: its node tag, and the in-process counters every typed method keeps. */
class CacheMetricsTest {

    @Test
    void forNode_whileANodeOfThatNameLives_getsASuffix_andClosingFreesTheName() {
        CacheMetrics first = CacheMetrics.forNode("Tag-Test.1", new CacheCounters());
        CacheMetrics second = CacheMetrics.forNode("tag_test_1", new CacheCounters());
        assertEquals("tag_test_1", first.node(), "reduced to [a-z0-9_]");
        assertEquals("tag_test_1_2", second.node());
        first.close();
        first.close();
        CacheMetrics third = CacheMetrics.forNode("tag_test_1", new CacheCounters());
        assertEquals("tag_test_1", third.node(), "a closed node's name is free again");
        second.close();
        third.close();
    }

    @Test
    void aStoppedNode_freesItsName() {
        Layout layout = Layout.small();
        CacheConfig config = CacheConfig.memoryOnly(layout, 64 * layout.slotBytes()).withConcurrency(1)
                .withWindowSlots(layout.slotsPerRecord(true)).withHostBudgetBytes((1 << 20) * layout.slotBytes());
        try (SimulatedDevice device = SimulatedDevice.create()) {
            SeleneCache cache = SeleneCache.start(config, device, CacheSettings.standaloneSystemConfig(),
                    "metrics-release");
            assertEquals("metrics_release", cache.status().toCompletableFuture().join().metricsNode());
            cache.close();
        }
        CacheMetrics after = CacheMetrics.forNode("metrics-release", new CacheCounters(), EnumSet.of(Tier.MEMORY));
        assertEquals("metrics_release", after.node());
        after.close();
    }

    @Test
    void forNode_ofANameLastUsedWithOtherTiers_takesTheNextSuffix() {
        CacheMetrics disk = CacheMetrics.forNode("tier_change", new CacheCounters(), EnumSet.of(Tier.DISK));
        disk.close();
        CacheMetrics memory = CacheMetrics.forNode("tier_change", new CacheCounters(), EnumSet.of(Tier.MEMORY));
        assertEquals("tier_change_2", memory.node(), "the disk node's series stay apart from the memory-only node's");
        memory.close();
        CacheMetrics again = CacheMetrics.forNode("tier_change", new CacheCounters(),
                EnumSet.of(Tier.MEMORY, Tier.DISK));
        assertEquals("tier_change", again.node(), "a node of the same tiers continues the series");
        again.close();
    }

    @Test
    void typedMethods_countUnderTheNamesStatusShows() {
        CacheCounters counters = new CacheCounters();
        try (CacheMetrics m = CacheMetrics.forNode("counter_names", counters)) {
            m.publication(new PublishResult.Stored(100));
            m.publication(new PublishResult.Retry(RetryReason.INFLIGHT));
            m.abandoned(AbandonReason.of(RetryReason.INFLIGHT));
            m.abandoned(AbandonReason.BAD_SNAPSHOT);
            m.evicted(Tier.DISK, 2);
            m.restored(1, 2, 0, 48, 300, 1_000);
            m.restoreRequested(64);
            m.diskBusy(CacheMetrics.Direction.READ, 5);
            m.spillStarted(3);
            m.spillStarted(2);
            m.droppedOrphans(4);
            m.expired(Tier.POOL, 1);
        }
        assertEquals(Map.ofEntries(
                Map.entry("publish.stored", 1L), Map.entry("publish.bytes", 100L),
                Map.entry("publish.retry_inflight", 1L), Map.entry("abandoned.inflight", 1L),
                Map.entry("abandoned.bad_snapshot", 1L), Map.entry("evicted.disk", 2L),
                Map.entry("restore.disk", 1L), Map.entry("restore.bytes", 300L),
                Map.entry("restore.hit_tokens", 48L), Map.entry("restore.requested_tokens", 64L),
                Map.entry("restore.records.memory", 1L), Map.entry("restore.records.disk", 2L),
                Map.entry("restore.records.pool", 0L), Map.entry("expired.pool", 1L),
                Map.entry("disk.read.busy_nanos", 5L), Map.entry("disk.write.max_in_flight", 3L),
                Map.entry("spill.orphans", 4L)), counters.snapshot());
    }

    @Test
    void aNodeWhoseSpillsGoToThePool_countsItsMostWritesInFlightUnderThePool_notTheDisk() {
        CacheCounters counters = new CacheCounters();
        try (CacheMetrics m = CacheMetrics.forNode("pool_spills", counters, EnumSet.of(Tier.MEMORY, Tier.POOL))) {
            m.spillStarted(4);
            m.spillStarted(2);
        }
        assertEquals(Map.of("pool.write.max_in_flight", 4L), counters.snapshot());
    }
}
