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
 * HELP |}, with the {@code ##} section it is under (a cache node's metrics, a pool manager's), and the check of one
 * row against a scrape.
 */
final class MetricCatalogue {

    static final Path FILE = Path.of("..", "docs", "metrics.md");
    /** The section of a cache node's metrics. */
    static final String NODE = "Catalogue";
    /** The section of a pool manager's metrics. */
    static final String MANAGER = "Pool manager metrics";

    /**
     * One row of the catalogue.
     *
     * @param labels the label names besides {@code node}, in the doc's order
     * @param values the combinations of their values that exist; null when a label takes any value (a namespace)
     */
    record Row(String section, String name, String type, String unit, List<String> labels, Set<List<String>> values,
               String help) {
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
                if (line.startsWith("| `selene_") && current.equals(section)) {
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

    /** Whether sample {@code series} (a histogram's {@code _bucket}, {@code _sum}, {@code _count} included) is of one of {@code names}. */
    static boolean of(Set<String> names, String series) {
        return names.contains(series.replaceFirst("_(bucket|sum|count)$", ""));
    }

    private static Row row(String section, String line) {
        String[] cells = line.substring(1, line.length() - 1).split("\\|");
        assertEquals(5, cells.length, "a catalogue row has five cells: " + line);
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
                cells[4].strip());
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
}
