package dev.selene.node.admin;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code /metrics} text of a memory-only node and of a disk node, each after a publish and a restore, against
 * Prometheus's conventions: {@code promtool check metrics} where it is installed, and the naming and exposition
 * rules of {@code docs/metrics.md} checked here.
 */
class MetricConventionsTest {

    private static final Path PROMTOOL = Path.of("/usr/bin/promtool");
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_]*");
    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
    /** Units that are not base units, as a name part. */
    private static final Pattern NON_BASE_UNIT = Pattern.compile(
            "_(nanoseconds|nanos|microseconds|micros|milliseconds|millis|ms|minutes|hours|days|kilobytes|megabytes"
                    + "|gigabytes|kb|mb|gb|kib|mib|gib|bits)(_|$)");
    /** The unit a name may end in, before {@code _total}. */
    private static final Pattern UNIT_SUFFIX = Pattern.compile("_(seconds|bytes|bytes_per_second)$");

    private static TestNode memory;
    private static TestNode disk;
    private static final Map<String, String> scrapes = new LinkedHashMap<>();

    @BeforeAll
    static void start() throws IOException {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "metric-conventions")), "disk");
        memory = new TestNode(Map.of());
        disk = new TestNode(Map.of("selene.disk.dir", dir.toString(), "selene.disk.size", "64m"));
        for (TestNode n : List.of(memory, disk)) {
            n.publishChain("conventions", 1, 2);
            n.restore("conventions", 1, 2);
        }
        scrapes.put("memory-only node", scrapeWithHistograms(memory));
        scrapes.put("disk node", scrapeWithHistograms(disk));
    }

    @AfterAll
    static void stop() {
        if (disk != null) {
            disk.close();
        }
        if (memory != null) {
            memory.close();
        }
    }

    @Test
    void promtoolCheckMetrics_findsNoProblem() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(PROMTOOL),
                "promtool is not installed (Debian: apt-get install prometheus); the naming rules are still checked "
                        + "by namingRules_holdForEveryFamily");
        for (Map.Entry<String, String> e : scrapes.entrySet()) {
            Process p = new ProcessBuilder(PROMTOOL.toString(), "check", "metrics").redirectErrorStream(true).start();
            try (var in = p.getOutputStream()) {
                in.write(e.getValue().getBytes(StandardCharsets.UTF_8));
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "promtool finished");
            assertEquals(0, p.exitValue(), e.getKey() + ": promtool check metrics:\n" + out);
            assertEquals("", out.strip(), e.getKey() + ": promtool check metrics reports nothing");
        }
    }

    @Test
    void namingRules_holdForEveryFamily() {
        for (Map.Entry<String, String> e : scrapes.entrySet()) {
            checkConventions(e.getKey(), e.getValue());
        }
    }

    @Test
    void namingRules_catchWhatTheyAreAbout() {
        // A rule that passes everything proves nothing: each broken exposition below must be caught.
        String help = "# HELP x_total X\n# TYPE x_total counter\n";
        assertCaught("# HELP x Count\n# TYPE x counter\nx 1\n", "ends in _total");
        assertCaught("# HELP x_seconds_total T\n# TYPE x_seconds_total gauge\nx_seconds_total 1\n", "only a counter");
        assertCaught("# HELP x_latency_milliseconds T\n# TYPE x_latency_milliseconds gauge\nx_latency_milliseconds 1\n",
                "base unit");
        assertCaught("# HELP x_bytes_read_total B\n# TYPE x_bytes_read_total counter\nx_bytes_read_total 1\n",
                "the unit ends the name");
        assertCaught("# TYPE x_total counter\nx_total 1\n", "HELP");
        assertCaught("# HELP x_total X\nx_total 1\n", "TYPE");
        assertCaught(help + "x_total{badLabel=\"a\"} 1\n", "snake_case");
        assertCaught("# HELP h_seconds H\n# TYPE h_seconds histogram\nh_seconds_bucket{le=\"1.0\"} 1\n"
                + "h_seconds_sum 0.5\nh_seconds_count 1\n", "+Inf");
        assertCaught("# HELP h_seconds H\n# TYPE h_seconds histogram\nh_seconds_bucket{le=\"1.0\"} 1\n"
                + "h_seconds_bucket{le=\"+Inf\"} 1\nh_seconds_count 1\n", "_sum");
    }

    /**
     * The rules: every family has HELP and TYPE before its samples; names and label names are snake_case; a
     * counter, and only a counter, ends in {@code _total}; a unit is a base unit ({@code _seconds}, {@code _bytes})
     * and ends the name (before {@code _total}); a histogram has {@code _bucket} series with {@code le}, among them
     * {@code +Inf} equal to its {@code _count}, rising with {@code le}, and a {@code _sum} and {@code _count} for
     * each label set.
     */
    private static void checkConventions(String what, String text) {
        Map<String, String> help = new HashMap<>();
        Map<String, String> types = new HashMap<>();
        Map<String, List<Sample>> byFamily = new TreeMap<>();
        for (String line : text.lines().toList()) {
            if (line.startsWith("# HELP ")) {
                String[] p = line.substring(7).split(" ", 2);
                assertTrue(p.length == 2 && !p[1].isBlank(), what + ": HELP has text: " + line);
                assertFalse(help.containsKey(p[0]), what + ": one HELP per family: " + line);
                help.put(p[0], p[1]);
            } else if (line.startsWith("# TYPE ")) {
                String[] p = line.substring(7).split(" ", 2);
                assertTrue(help.containsKey(p[0]), what + ": HELP before TYPE: " + line);
                assertTrue(Set.of("counter", "gauge", "histogram").contains(p[1]), what + ": type of " + line);
                types.put(p[0], p[1]);
            } else if (!line.isBlank() && !line.startsWith("#")) {
                Sample s = Sample.parse(line);
                String family = family(s.name(), types);
                assertNotNull(family, what + ": HELP and TYPE before the first sample of " + line);
                s.labels().keySet().forEach(k -> assertTrue(NAME.matcher(k).matches(),
                        what + ": label names are snake_case: " + line));
                byFamily.computeIfAbsent(family, f -> new ArrayList<>()).add(s);
            }
        }
        assertEquals(types.keySet(), help.keySet(), what + ": every family has HELP and TYPE");
        assertEquals(types.keySet(), byFamily.keySet(), what + ": every family declared has samples");
        for (Map.Entry<String, List<Sample>> f : byFamily.entrySet()) {
            String name = f.getKey();
            String type = types.get(name);
            assertTrue(NAME.matcher(name).matches(), what + ": names are snake_case: " + name);
            assertEquals(type.equals("counter"), name.endsWith("_total"),
                    what + ": a counter ends in _total, and only a counter: " + name + " is a " + type);
            assertFalse(NON_BASE_UNIT.matcher(name).find(), what + ": base units only (seconds, bytes): " + name);
            String stem = name.replaceFirst("_total$", "");
            Matcher unit = UNIT_SUFFIX.matcher(stem);
            String beforeUnit = unit.find() ? stem.substring(0, unit.start()) : stem;
            assertFalse(beforeUnit.matches(".*_(seconds|bytes)(_.*)?"),
                    what + ": the unit ends the name (before _total): " + name);
            if (type.equals("histogram")) {
                checkHistogram(what, name, f.getValue());
            } else {
                f.getValue().forEach(s -> assertEquals(name, s.name(), what + ": series of " + name));
            }
        }
    }

    private static void checkHistogram(String what, String name, List<Sample> samples) {
        assertTrue(unitOf(name) != null, what + ": a histogram's name ends in its base unit: " + name);
        Map<Map<String, String>, TreeMap<Double, Double>> buckets = new HashMap<>();
        Map<Map<String, String>, Double> sums = new HashMap<>();
        Map<Map<String, String>, Double> counts = new HashMap<>();
        for (Sample s : samples) {
            Map<String, String> labels = new TreeMap<>(s.labels());
            String le = labels.remove("le");
            if (s.name().equals(name + "_bucket")) {
                assertNotNull(le, what + ": a bucket has le: " + s);
                double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
                buckets.computeIfAbsent(labels, k -> new TreeMap<>()).put(bound, s.value());
            } else if (s.name().equals(name + "_sum")) {
                sums.put(labels, s.value());
            } else if (s.name().equals(name + "_count")) {
                counts.put(labels, s.value());
            } else {
                throw new AssertionError(what + ": a histogram has _bucket, _sum and _count series only: " + s);
            }
        }
        assertFalse(buckets.isEmpty(), what + ": " + name + " has buckets");
        assertEquals(buckets.keySet(), sums.keySet(), what + ": " + name + "_sum for each label set");
        assertEquals(buckets.keySet(), counts.keySet(), what + ": " + name + "_count for each label set");
        buckets.forEach((labels, b) -> {
            assertTrue(b.containsKey(Double.POSITIVE_INFINITY), what + ": " + name + labels + " has le=\"+Inf\"");
            assertEquals(counts.get(labels), b.get(Double.POSITIVE_INFINITY),
                    what + ": " + name + labels + ": the +Inf bucket is the count");
            double previous = 0;
            for (double v : b.values()) {
                assertTrue(v >= previous, what + ": " + name + labels + ": buckets are cumulative: " + b);
                previous = v;
            }
        });
    }

    private static String unitOf(String name) {
        Matcher m = UNIT_SUFFIX.matcher(name);
        return m.find() ? m.group(1) : null;
    }

    /** The family a sample belongs to: its name, or a histogram's name for its _bucket, _sum and _count. */
    private static String family(String series, Map<String, String> types) {
        if (types.containsKey(series)) {
            return series;
        }
        String base = series.replaceFirst("_(bucket|sum|count)$", "");
        return "histogram".equals(types.get(base)) ? base : null;
    }

    private static void assertCaught(String text, String rule) {
        try {
            checkConventions("example", text);
        } catch (AssertionError e) {
            assertTrue(e.getMessage().contains(rule), "caught by the rule on " + rule + ", not: " + e.getMessage());
            return;
        }
        throw new AssertionError("the rule on " + rule + " let this through:\n" + text);
    }

    /** A node's scrape once its publish and restore latency histograms have their first sample. */
    private static String scrapeWithHistograms(TestNode n) {
        Map<String, String> node = Map.of("node", n.metricsNode());
        return await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> n.get("/metrics").body(), body -> {
                    Scrape s = Scrape.parse(body);
                    return s.value("selene_publish_latency_seconds_count", node) > 0
                            && s.value("selene_restore_latency_seconds_count", node) > 0;
                });
    }

    /** One sample line: the series name, its labels and its value. */
    private record Sample(String name, Map<String, String> labels, double value) {

        static Sample parse(String line) {
            Matcher m = SAMPLE.matcher(line);
            assertTrue(m.matches(), "a sample line: " + line);
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            return new Sample(m.group(1), labels, Double.parseDouble(m.group(3)));
        }
    }
}
