package dev.selene.node.admin;

import dev.selene.actors.api.RestoreResult;
import dev.selene.engine.key.ChainHash;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
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
 * parsed, so neither the doc nor the instruments can drift from the other.
 */
class MetricsScrapeTest {

    private static final Path CATALOGUE = Path.of("..", "docs", "metrics.md");
    private static final Pattern LABEL_VALUE = Pattern.compile("[a-z0-9_]+");
    private static final String NS = "scrape";

    /**
     * One row of the catalogue.
     *
     * @param labels the label names besides {@code node}, in the doc's order
     * @param values the combinations of their values that exist
     */
    private record Documented(String name, String type, String unit, List<String> labels, Set<List<String>> values,
                              String help) {
    }

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

            List<Documented> catalogue = catalogue();
            assertFalse(catalogue.isEmpty(), "no catalogue rows parsed from " + CATALOGUE);
            Set<String> documented = new HashSet<>();
            for (Documented d : catalogue) {
                documented.add(d.name());
                checkAgainstScrape(d, scrape);
            }
            assertEquals(new TreeSet<>(documented), new TreeSet<>(scrape.types().keySet()),
                    "every metric exported is in the catalogue, and every one there is exported");
            for (Scrape.Sample s : scrape.samples()) {
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

    private static void checkAgainstScrape(Documented d, Scrape scrape) {
        String name = d.name();
        assertEquals(d.type(), scrape.types().get(name), name + ": type");
        assertEquals(d.help(), scrape.help().get(name), name + ": HELP");
        switch (d.unit()) {
            case "seconds" -> assertTrue(name.contains("_seconds"), name + ": the unit is in the name");
            case "bytes" -> assertTrue(name.contains("_bytes"), name + ": the unit is in the name");
            default -> assertEquals("—", d.unit(), name + ": unit");
        }
        String series = name;
        if (d.type().equals("counter")) {
            assertTrue(name.endsWith("_total"), name + ": a counter ends in _total");
        } else if (d.type().equals("histogram")) {
            assertTrue(name.endsWith("_seconds") || name.endsWith("_bytes"), name + ": a histogram's base unit");
            for (String suffix : List.of("_bucket", "_sum", "_count")) {
                assertFalse(scrape.series(name + suffix, Map.of()).isEmpty(), name + suffix + " exported");
            }
            series = name + "_count";
        } else {
            assertFalse(name.endsWith("_total"), name + ": only counters end in _total");
        }
        Set<List<String>> exported = new HashSet<>();
        for (Scrape.Sample s : scrape.series(series, Map.of())) {
            Set<String> keys = new TreeSet<>(s.labels().keySet());
            keys.remove("node");
            assertEquals(new TreeSet<>(d.labels()), keys, name + ": labels of " + s);
            exported.add(d.labels().stream().map(s.labels()::get).toList());
        }
        assertEquals(d.values(), exported, name + ": the label values documented are those exported");
    }

    /** The rows of every catalogue table: {@code | `name` | type | unit | labels | HELP |}. */
    private static List<Documented> catalogue() throws IOException {
        List<Documented> rows = new ArrayList<>();
        for (String line : Files.readAllLines(CATALOGUE)) {
            if (!line.startsWith("| `selene_")) {
                continue;
            }
            String[] cells = line.substring(1, line.length() - 1).split("\\|");
            assertEquals(5, cells.length, "a catalogue row has five cells: " + line);
            String labels = cells[3].strip();
            List<String> names = List.of();
            Set<List<String>> values = Set.of(List.of());
            if (!labels.equals("—")) {
                String[] parts = labels.split(": ", 2);
                names = Arrays.stream(parts[0].split("/")).map(MetricsScrapeTest::code).toList();
                values = new HashSet<>();
                for (String combo : parts[1].split(", ")) {
                    values.add(Arrays.stream(combo.split("/")).map(MetricsScrapeTest::code).toList());
                }
            }
            rows.add(new Documented(code(cells[0]), cells[1].strip(), cells[2].strip(), names, values,
                    cells[4].strip()));
        }
        return rows;
    }

    private static String code(String cell) {
        String c = cell.strip();
        assertTrue(c.startsWith("`") && c.endsWith("`"), "expected `code`: " + c);
        return c.substring(1, c.length() - 1);
    }
}
