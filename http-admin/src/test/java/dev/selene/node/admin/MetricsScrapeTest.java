package dev.selene.node.admin;

import dev.selene.actors.api.RestoreResult;
import dev.selene.engine.key.ChainHash;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * parsed, so neither the doc nor the instruments can drift from the other.
 */
class MetricsScrapeTest {

    private static final Pattern LABEL_VALUE = Pattern.compile("[a-z0-9_]+");
    private static final String NS = "scrape";

    @Test
    void scrape_afterPublishDrainAndRestores_matchesTheCatalogue() throws Exception {
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
            RestoreResult fromDisk = second.restore(NS, 1, 2, 3);
            assertEquals(3, fromDisk.fromDisk(), "the restart left the records on disk only: " + fromDisk);
            Map<String, String> node = Map.of("node", second.metricsNode());
            Scrape scrape = await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                    .until(() -> Scrape.parse(second.get("/metrics").body()),
                            s -> s.value("selene_disk_read_latency_seconds_count", node) > 0
                                    && s.value("selene_restore_promotions_total", node) >= 3);

            // A pool manager run earlier in this JVM leaves its own series in Kamon's registry; they have a
            // section of their own, checked against a manager's scrape (ManagerNodeTest).
            Set<String> managers = MetricCatalogue.names(MetricCatalogue.MANAGER);
            Set<String> documented = new TreeSet<>();
            Set<String> unsampled = new TreeSet<>();
            for (MetricCatalogue.Row d : MetricCatalogue.rows(MetricCatalogue.NODE)) {
                if (d.type().equals("histogram") && scrape.series(d.name() + "_count", Map.of()).isEmpty()) {
                    // A histogram appears with its first sample; this scenario has no pool, so the pool's retire
                    // latency may be missing (it is present when a pool host ran earlier in this JVM).
                    assertTrue(d.name().startsWith("selene_pool_"), d.name() + " exported");
                    unsampled.add(d.name());
                    continue;
                }
                documented.add(d.name());
                MetricCatalogue.check(d, scrape, Map.of());
            }
            Set<String> exported = new TreeSet<>(scrape.types().keySet());
            exported.removeAll(managers);
            exported.removeAll(unsampled); // declared (a TYPE line) but without a series yet
            assertEquals(documented, exported,
                    "every metric exported is in the catalogue, and every one there is exported");
            for (Scrape.Sample s : scrape.samples()) {
                if (MetricCatalogue.of(managers, s.name())) {
                    continue;
                }
                assertTrue(s.labels().containsKey("node"), "every series is tagged with its node: " + s);
                s.labels().forEach((k, v) -> assertTrue(k.equals("le") || LABEL_VALUE.matcher(v).matches(),
                        "label value outside [a-z0-9_]: " + s));
            }
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
}
