package dev.selene.node.admin;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The metric catalogue in {@code docs/metrics.md}, parsed: every table row {@code | `name` | type | unit | labels |
 * HELP |} (a cache node's rows end with the tiers the metric needs), with the {@code ##} section it is under (a
 * cache node's metrics, a pool manager's, the process's), and the check of one row against a scrape.
 */
final class MetricCatalogue {

    static final Path FILE = Path.of("..", "docs", "metrics.md");
    /** The section of a cache node's metrics. */
    static final String NODE = "Catalogue";
    /** The section of a pool manager's metrics. */
    static final String MANAGER = "Pool manager metrics";
    /** The section of the process's metrics, on every node and manager. */
    static final String PROCESS = "Process metrics";
    /** The tiers a label value or a row's tiers cell can name. */
    static final Set<String> TIERS = Set.of("memory", "disk", "pool");

    /**
     * One row of the catalogue.
     *
     * @param labels the label names besides {@code node}, in the doc's order
     * @param values the combinations of their values that exist; null when a label takes any value (a namespace)
     * @param tiers the tiers of which a node needs one to export the metric; empty when every node exports it
     */
    record Row(String section, String name, String type, String unit, List<String> labels, Set<List<String>> values,
               String help, Set<String> tiers) {

        /**
         * This row as a node with {@code nodeTiers} exports it: null when it needs a tier the node lacks, else with
         * the label combinations that name a missing tier left out.
         */
        Row on(Set<String> nodeTiers) {
            if (!tiers.isEmpty() && tiers.stream().noneMatch(nodeTiers::contains)) {
                return null;
            }
            Set<List<String>> kept = values == null ? null : new HashSet<>();
            if (values != null) {
                for (List<String> combo : values) {
                    if (combo.stream().noneMatch(v -> TIERS.contains(v) && !nodeTiers.contains(v))) {
                        kept.add(combo);
                    }
                }
            }
            return new Row(section, name, type, unit, labels, kept, help, tiers);
        }
    }

    private MetricCatalogue() {
    }

    /** The rows of section {@code section}. */
    static List<Row> rows(String section) {
        List<Row> rows = new ArrayList<>();
        String current = "";
        try {
            for (String line : Files.readAllLines(FILE)) {
                if (line.startsWith("## ")) {
                    current = line.substring(3).strip();
                }
                if (line.startsWith("| `") && current.equals(section)) {
                    rows.add(row(current, line));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertFalse(rows.isEmpty(), "no catalogue rows parsed from section '" + section + "' of " + FILE);
        return rows;
    }

    /** The names documented in {@code section}. */
    static Set<String> names(String section) {
        Set<String> names = new TreeSet<>();
        rows(section).forEach(r -> names.add(r.name()));
        return names;
    }

    /** The rows of a cache node's metrics that a node with {@code nodeTiers} exports, as it exports them. */
    static List<Row> nodeRows(Set<String> nodeTiers) {
        return rows(NODE).stream().map(r -> r.on(nodeTiers)).filter(r -> r != null).toList();
    }

    /** Whether sample {@code series} (a histogram's {@code _bucket}, {@code _sum}, {@code _count} included) is of one of {@code names}. */
    static boolean of(Set<String> names, String series) {
        return names.contains(series.replaceFirst("_(bucket|sum|count)$", ""));
    }

    private static Row row(String section, String line) {
        String[] cells = line.substring(1, line.length() - 1).split("\\|");
        assertEquals(section.equals(NODE) ? 6 : 5, cells.length, "a catalogue row of '" + section + "' has "
                + (section.equals(NODE) ? "six cells (the last its tiers)" : "five cells") + ": " + line);
        Set<String> tiers = Set.of();
        if (cells.length == 6 && !cells[5].strip().equals("—")) {
            tiers = Set.of(cells[5].strip().split(" or "));
            assertTrue(TIERS.containsAll(tiers), "tiers of " + line);
        }
        String labels = cells[3].strip();
        List<String> names = List.of();
        Set<List<String>> values = Set.of(List.of());
        if (!labels.equals("—")) {
            String[] parts = labels.split(": ", 2);
            names = Arrays.stream(parts[0].split("/")).map(MetricCatalogue::code).toList();
            if (!parts[1].startsWith("`")) {
                values = null;
            } else {
                values = new HashSet<>();
                for (String combo : parts[1].split(", ")) {
                    values.add(Arrays.stream(combo.split("/")).map(MetricCatalogue::code).toList());
                }
            }
        }
        return new Row(section, code(cells[0]), cells[1].strip(), cells[2].strip(), names, values,
                cells[4].strip(), tiers);
    }

    private static String code(String cell) {
        String c = cell.strip();
        assertTrue(c.startsWith("`") && c.endsWith("`"), "expected `code`: " + c);
        return c.substring(1, c.length() - 1);
    }

    /**
     * Checks row {@code d} against the series of {@code scrape} that carry {@code labels}: type, HELP, unit in the
     * name, the labels besides {@code node}, and (where the doc lists them) exactly the label values exported (for
     * a histogram, values the scraped node has not recorded yet may be missing).
     */
    static void check(Row d, Scrape scrape, Map<String, String> labels) {
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
                assertFalse(scrape.series(name + suffix, labels).isEmpty(), name + suffix + " exported");
            }
            series = name + "_count";
        } else {
            assertFalse(name.endsWith("_total"), name + ": only counters end in _total");
        }
        Set<List<String>> exported = new HashSet<>();
        for (Scrape.Sample s : scrape.series(series, labels)) {
            Set<String> keys = new TreeSet<>(s.labels().keySet());
            keys.remove("node");
            assertEquals(new TreeSet<>(d.labels()), keys, name + ": labels of " + s);
            exported.add(d.labels().stream().map(s.labels()::get).toList());
        }
        if (d.values() != null && d.type().equals("histogram")) {
            // A histogram's series appears with its first sample; the scraped node need not have seen every source.
            assertTrue(d.values().containsAll(exported), name + ": every label value exported is documented: "
                    + exported);
        } else if (d.values() != null) {
            assertEquals(d.values(), exported, name + ": the label values documented are those exported");
        }
    }

    /**
     * Checks the process's metrics of {@code scrape} against the process section: every one documented is
     * exported once, without a {@code node} label, as the doc says.
     */
    static void checkProcess(Scrape scrape) {
        for (Row d : rows(PROCESS)) {
            check(d, scrape, Map.of());
            String series = d.type().equals("histogram") ? d.name() + "_count" : d.name();
            for (Scrape.Sample s : scrape.series(series, Map.of())) {
                assertFalse(s.labels().containsKey("node"), "a process metric has no node label: " + s);
            }
        }
    }
}
