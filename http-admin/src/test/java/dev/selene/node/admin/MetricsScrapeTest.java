package dev.selene.node.admin;

import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.Tier;
import dev.selene.engine.key.ChainHash;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code /metrics} scrape of served nodes against the catalogue in {@code docs/metrics.md}: the doc's tables are
 * parsed, so neither the doc nor the instruments can drift from the other. Each node is checked on its own series
 * (its {@code node} label): other nodes run earlier in this JVM leave theirs in Kamon's registry.
 */
class MetricsScrapeTest {

    private static final Pattern LABEL_VALUE = Pattern.compile("[a-z0-9_]+");
    private static final String NS = "scrape";
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    @Test
    void scrape_ofADiskNode_afterPublishDrainAndRestores_matchesTheCatalogue_withoutPoolSeries() throws Exception {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "metrics-scrape")), "node");
        Map<String, String> disk = Map.of("selene.disk.dir", dir.toString(), "selene.disk.size", "64m");
        try (TestNode first = new TestNode(disk)) {
            first.publishChain(NS, 1, 2, 3);
            first.node.cache().lookup(NS, ChainHash.chain(new long[] {1, 2, 3})).toCompletableFuture().join();
            RestoreResult fromMemory = first.restore(NS, 1, 2, 3);
            assertEquals(3, fromMemory.fromMemory(), String.valueOf(fromMemory));
            assertEquals(RestoreResult.Outcome.MISS, first.restore(NS, 99).outcome());
            assertEquals(3, first.node.cache().drain(Duration.ofSeconds(20)).toCompletableFuture().join().written());
        }
        try (TestNode second = new TestNode(disk)) {
            Map<String, String> node = Map.of("node", second.metricsNode());
            RestoreResult fromDisk = second.restore(NS, 1, 2, 3);
            assertEquals(3, fromDisk.fromDisk(), "the restart left the records on disk only: " + fromDisk);
            Scrape scrape = await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
                    .until(() -> Scrape.parse(second.get("/metrics").body()),
                            s -> s.value("selene_disk_read_latency_seconds_count", node) > 0
                                    && s.value("selene_restore_promotions_total", node) >= 3);
            checkNode(scrape, second.metricsNode(), Set.of("memory", "disk"));
        }
    }

    @Test
    void scrape_ofAMemoryOnlyNode_matchesTheCatalogue_withoutDiskOrPoolSeries() {
        try (TestNode memory = new TestNode(Map.of())) {
            Map<String, String> node = Map.of("node", memory.metricsNode());
            memory.publishChain(NS, 1, 2);
            assertEquals(2, memory.restore(NS, 1, 2).fromMemory());
            Scrape scrape = await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
                    .until(() -> Scrape.parse(memory.get("/metrics").body()),
                            s -> s.value("selene_restore_latency_seconds_count", node) > 0
                                    && s.value("selene_publish_latency_seconds_count", node) > 0);
            checkNode(scrape, memory.metricsNode(), Set.of("memory"));
            for (Scrape.Sample s : scrape.samples()) {
                if (node.get("node").equals(s.labels().get("node"))) {
                    assertFalse(s.name().startsWith("selene_disk_") || s.name().startsWith("selene_pool_")
                            || s.labels().containsValue("disk") || s.labels().containsValue("pool"),
                            "a memory-only node exports no disk or pool series: " + s);
                }
            }
        }
    }

    @Test
    void theCatalogsCounts_haveAPoolSeries_onlyWhereThePoolIsTheNodesDurableTier_notBesideADisk() {
        try (TestNode scraped = new TestNode(Map.of());
             CacheMetrics both = CacheMetrics.forNode("scrape_disk_and_pool", new CacheCounters(),
                     EnumSet.of(Tier.MEMORY, Tier.DISK, Tier.POOL));
             CacheMetrics poolOnly = CacheMetrics.forNode("scrape_pool_only", new CacheCounters(),
                     EnumSet.of(Tier.MEMORY, Tier.POOL))) {
            both.evicted(Tier.POOL, 1);
            poolOnly.evicted(Tier.POOL, 1);
            List<String> names = List.of("selene_records", "selene_evictions_total", "selene_expired_total");
            Scrape scrape = await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
                    .until(() -> Scrape.parse(scraped.get("/metrics").body()),
                            s -> names.stream().allMatch(n -> !s.series(n, Map.of("node", both.node())).isEmpty()
                                    && !s.series(n, Map.of("node", poolOnly.node())).isEmpty()));
            for (String name : names) {
                assertEquals(Set.of("memory", "disk"), tiersOf(scrape, name, both.node()),
                        name + ": a pool written besides a disk is not the catalog's to count");
                assertEquals(Set.of("memory", "pool"), tiersOf(scrape, name, poolOnly.node()), name);
            }
            assertFalse(scrape.series("selene_transfer_bytes_total", Map.of("node", both.node(), "tier", "pool"))
                    .isEmpty(), "the pool's own series stay on a node with a disk and the pool");
        }
    }

    private static Set<String> tiersOf(Scrape scrape, String name, String node) {
        Set<String> tiers = new TreeSet<>();
        scrape.series(name, Map.of("node", node)).forEach(s -> tiers.add(s.labels().get("tier")));
        return tiers;
    }

    @Test
    void restoreTokenCounters_countWhatRestoresAskedFor_andWhatTheyCopied() {
        try (TestNode memory = new TestNode(Map.of())) {
            Map<String, String> node = Map.of("node", memory.metricsNode());
            long tokensPerRecord = memory.layout().tokensPerRecord();
            memory.publishChain(NS, 1, 2);
            // A namesake closed earlier in this JVM leaves its counts in the series: count from where they stand.
            double requested0 = settled(memory, "selene_restore_requested_tokens_total", node);
            double hit0 = settled(memory, "selene_restore_hit_tokens_total", node);

            assertEquals(2, memory.restore(NS, 1, 2).fromMemory());
            assertEquals(2, memory.restore(NS, 1, 2).fromMemory());
            assertEquals(RestoreResult.Outcome.MISS, memory.restore(NS, 7, 8, 9).outcome());

            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                Scrape s = Scrape.parse(memory.get("/metrics").body());
                assertEquals(7 * tokensPerRecord, s.value("selene_restore_requested_tokens_total", node) - requested0,
                        "2 + 2 + 3 records asked for");
                assertEquals(4 * tokensPerRecord, s.value("selene_restore_hit_tokens_total", node) - hit0,
                        "2 + 2 records copied");
            });
        }
    }

    @Test
    void twoNodesInOneJvm_keepTheirOwnGauges() {
        try (TestNode small = new TestNode(Map.of("selene.warm", "1m"));
             TestNode large = new TestNode(Map.of("selene.warm", "4m"))) {
            String a = small.metricsNode();
            String b = large.metricsNode();
            assertFalse(a.equals(b), "two live nodes share the tag " + a);
            int smallSlots = small.node.cache().status().toCompletableFuture().join().totalSlots();
            int largeSlots = large.node.cache().status().toCompletableFuture().join().totalSlots();
            assertTrue(largeSlots > smallSlots);
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> {
                Scrape s = Scrape.parse(small.get("/metrics").body());
                return s.value("selene_slots_capacity", Map.of("node", a)) == smallSlots
                        && s.value("selene_slots_capacity", Map.of("node", b)) == largeSlots;
            });
        }
    }

    /**
     * Checks the series of node {@code tag}, which has {@code tiers}, against the catalogue: it exports exactly the
     * metrics of its tiers, each as documented; the process's metrics are there, as documented; and every family in
     * the scrape is documented somewhere.
     */
    static void checkNode(Scrape scrape, String tag, Set<String> tiers) {
        Map<String, String> node = Map.of("node", tag);
        List<MetricCatalogue.Row> rows = MetricCatalogue.nodeRows(tiers);
        Set<String> documented = new TreeSet<>();
        for (MetricCatalogue.Row d : rows) {
            documented.add(d.name());
            MetricCatalogue.check(d, scrape, node);
        }
        Set<String> exported = new TreeSet<>();
        for (Scrape.Sample s : scrape.samples()) {
            if (tag.equals(s.labels().get("node"))) {
                exported.add(s.name().replaceFirst("_(bucket|sum|count)$", ""));
                s.labels().forEach((k, v) -> assertTrue(k.equals("le") || LABEL_VALUE.matcher(v).matches(),
                        "label value outside [a-z0-9_]: " + s));
            }
        }
        assertEquals(documented, exported, "the node exports the metrics of its tiers " + tiers
                + " in the catalogue, and every one there is exported");

        MetricCatalogue.checkProcess(scrape);

        Set<String> everywhere = new HashSet<>();
        for (String section : List.of(MetricCatalogue.NODE, MetricCatalogue.MANAGER, MetricCatalogue.PROCESS)) {
            everywhere.addAll(MetricCatalogue.names(section));
        }
        Set<String> undocumented = new TreeSet<>(scrape.types().keySet());
        undocumented.removeAll(everywhere);
        assertEquals(Set.of(), undocumented, "every family exported is in the catalogue");
    }

    /** The value of series {@code name} of {@code node} once two scrapes a Kamon tick apart agree on it. */
    private static double settled(TestNode n, String name, Map<String, String> node) {
        double[] last = {Double.NaN};
        return await().atMost(PATIENCE).pollInterval(Duration.ofMillis(PrometheusMetrics.TICK_SECONDS * 1000L + 100))
                .until(() -> {
                    double v = Scrape.parse(n.get("/metrics").body()).value(name, node);
                    boolean same = v == last[0];
                    last[0] = v;
                    return same ? v : Double.NaN;
                }, v -> !Double.isNaN(v));
    }
}
