package dev.selene.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.actors.value.RetryReason;
import dev.selene.engine.key.RecordKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.imageio.ImageIO;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The status page in real headless Chromium (Debian's {@code chromium}; {@code .ci/run} installs it): the page
 * loads from the node alone (uPlot included), the occupancy chart draws the sampled points (ink in the plotting
 * area of a screenshot), the record list shows the page the URL asks for, a record's link opens its chain and
 * actor trace, and the abandons and expiries are one row per reason with their counts. Skips, saying why, only
 * when no Chromium can be found.
 */
public class StatusPageChromiumTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern CHART_POINTS = Pattern.compile("data-chart-points=\"(\\d+)\"");
    private static final Pattern RATE_POINTS = Pattern.compile("data-rate-points=\"(\\d+)\"");
    private static final Pattern RECORDS_SHOWN = Pattern.compile("data-records-shown=\"(\\d+)\"");
    private static final Pattern TRACE_EVENTS = Pattern.compile("data-trace-events=\"(\\d+)\"");
    private static final Pattern PLOT_BOX = Pattern.compile(
            "id=\"chart\"[^>]*data-plot-box=\"(\\d+),(\\d+),(\\d+),(\\d+)\"");
    private static final Pattern EVENT_ROW = Pattern.compile(
            "data-counter=\"([^\"]+)\"><td>[^<]*</td><td>[^<]*</td><td>(\\d+)</td>");
    private static final Pattern RECORD_ROW = Pattern.compile("<tr data-key=\"([^\"]+)\"[^>]*><td><a href=\"([^\"]+)\"");

    public static Optional<Path> chromium() {
        String env = System.getenv("CHROMIUM");
        return Stream.concat(Stream.ofNullable(env), Stream.of("/usr/bin/chromium", "/usr/bin/chromium-browser",
                        "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"))
                .map(Path::of).filter(Files::isExecutable).findFirst();
    }

    @Test
    void thePageCharts_pagesRecords_groupsEvents_andARecordLinkShowsItsTrace(@TempDir Path profile)
            throws Exception {
        Optional<Path> chromium = chromium();
        assumeTrue(chromium.isPresent(), "no Chromium found (/usr/bin/chromium or $CHROMIUM); "
                + "install Debian's chromium package to run this test (.ci/run does)");
        try (TestNode node = new TestNode(Map.of("selene.prefix-cache.max-age", "1ms"))) {
            // Events count from the first sample on: let the sampler take one before anything happens.
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> node.get("/status/history").body().contains("\"epochMillis\""));
            node.publishChain("old", 1, 2);
            Thread.sleep(5); // older than the 1 ms max age (the background sweep runs once a minute)
            assertEquals(2, JSON.readTree(node.send("POST", "/expire", TestNode.TOKEN, null).body())
                    .get("expired").asInt());
            RecordKey abandoned = new RecordKey("gone", 1);
            for (int i = 0; i < 3; i++) {
                node.node.cache().reportAbandoned(abandoned, RetryReason.NO_SPACE);
            }
            node.node.cache().reportAbandoned(abandoned, RetryReason.INFLIGHT);
            node.publishChain("page", 7, 8, 9);
            node.publishChain("zeta", 4, 5);
            Map<String, Integer> expectedEvents = Map.of("abandoned.no_space", 3, "abandoned.inflight", 1,
                    "expired.memory", 2);
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() ->
                    eventCounts(node).equals(expectedEvents)
                            && node.get("/status/history").body().split("\"epochMillis\"").length > 4);
            JsonNode secondPage = JSON.readTree(node.get("/records?offset=2&limit=2").body());
            assertEquals(5, secondPage.get("total").asInt());

            Path shot = profile.resolve("page.png");
            String dom = load(chromium.get(), profile, node.base + "/?limit=2&offset=2", shot);

            int points = group(CHART_POINTS, dom);
            assertTrue(points >= 3, "the chart drew " + points + " points");
            assertTrue(group(RATE_POINTS, dom) >= 3, "the rates chart drew its points");
            assertTrue(dom.contains("class=\"uplot"), "uPlot built the charts");
            assertInked(shot, dom);

            assertEquals(2, group(RECORDS_SHOWN, dom));
            assertTrue(dom.contains("3–4 of 5"), "the list says which page it shows");
            Matcher rows = RECORD_ROW.matcher(dom);
            List<String> shown = new ArrayList<>();
            List<String> links = new ArrayList<>();
            while (rows.find()) {
                shown.add(rows.group(1));
                links.add(rows.group(2).replace("&amp;", "&"));
            }
            List<String> expected = new ArrayList<>();
            secondPage.get("records").forEach(r -> expected.add(r.get("key").asText()));
            assertEquals(expected, shown, "the second page of two, as /records has it");

            Map<String, Integer> eventRows = new HashMap<>();
            Matcher ev = EVENT_ROW.matcher(dom);
            while (ev.find()) {
                assertNull(eventRows.put(ev.group(1), Integer.parseInt(ev.group(2))), "one row per reason");
            }
            assertEquals(expectedEvents, eventRows);
            assertTrue(dom.contains("memory-only"), "the node line is filled");
            assertEquals(-1, dom.indexOf("cannot reach the node"));

            // Follow the link of the page's first record, as a click does: its chain and actor trace show.
            String target = shown.getFirst();
            String recordDom = load(chromium.get(), profile, node.base + "/" + links.getFirst(), null);
            int events = group(TRACE_EVENTS, recordDom);
            assertTrue(events >= 2, "the record showed " + events + " trace events");
            assertTrue(recordDom.contains("Catalog") && recordDom.contains("RecordActor"), "trace rows in the page");
            JsonNode chain = JSON.readTree(node.get("/records/" + target).body()).get("chain");
            assertTrue(recordDom.contains("<tr data-key=\"" + chain.get(0).get("key").asText() + "\""),
                    "the chain starts at the root");
            assertTrue(recordDom.contains("<tr data-key=\"" + target + "\" class=\"selected\""),
                    "the record is marked in its chain");
            assertEquals(2, group(RECORDS_SHOWN, recordDom), "the list stays on its page");
        }
    }

    @Test
    void thePage_listsEvictionsToMakeRoom_andCallsTheSlotsEvictionTakesDroppable(@TempDir Path profile)
            throws Exception {
        // issue 26: the panel said "none" beside a rates chart of evictions; "clean" slots on a memory-only node
        Optional<Path> chromium = chromium();
        assumeTrue(chromium.isPresent(), "no Chromium found (/usr/bin/chromium or $CHROMIUM); "
                + "install Debian's chromium package to run this test (.ci/run does)");
        try (TestNode node = new TestNode(Map.of())) {
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> node.get("/status/history").body().contains("\"epochMillis\""));
            for (int i = 1; i <= 40; i++) { // more than the 1 MiB warm tier holds: the coldest are evicted
                node.publishChain("fill", i);
            }
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                    .until(() -> eventCounts(node).getOrDefault("evicted.memory", 0) > 0);
            String dom = load(chromium.get(), profile, node.base + "/", null);
            Map<String, Integer> eventRows = new HashMap<>();
            Matcher ev = EVENT_ROW.matcher(dom);
            while (ev.find()) {
                eventRows.put(ev.group(1), Integer.parseInt(ev.group(2)));
            }
            assertTrue(eventRows.getOrDefault("evicted.memory", 0) > 0, "an eviction row: " + eventRows);
            assertTrue(dom.contains("<td>droppable</td>"), "the slot figure eviction can take");
            assertFalse(dom.contains("<td>clean</td>"), "no 'clean' slots on a memory-only node");
        }
    }

    /** The counts of /status/history's groups, by counter. */
    private static Map<String, Integer> eventCounts(TestNode node) throws IOException {
        Map<String, Integer> counts = new HashMap<>();
        JSON.readTree(node.get("/status/history").body()).get("eventsByReason")
                .forEach(g -> counts.put(g.get("counter").asText(), g.get("count").asInt()));
        return counts;
    }

    /** The occupancy chart's plotting area in the screenshot holds its blue line across most of its width. */
    private static void assertInked(Path shot, String dom) throws IOException {
        Matcher box = PLOT_BOX.matcher(dom);
        assertTrue(box.find(), "no plot box on the chart");
        int x0 = Integer.parseInt(box.group(1));
        int y0 = Integer.parseInt(box.group(2));
        int w = Integer.parseInt(box.group(3));
        int h = Integer.parseInt(box.group(4));
        BufferedImage img = ImageIO.read(shot.toFile());
        assertTrue(x0 + w <= img.getWidth() && y0 + h <= img.getHeight(), "the chart is inside the screenshot");
        int inkedColumns = 0;
        for (int x = x0; x < x0 + w; x++) {
            for (int y = y0; y < y0 + h; y++) {
                int rgb = img.getRGB(x, y);
                int r = (rgb >> 16) & 0xff;
                int b = rgb & 0xff;
                if (b - r > 60) { // the blue of slots in use, not the grey grid or the white ground
                    inkedColumns++;
                    break;
                }
            }
        }
        assertTrue(inkedColumns > w / 2, "the slots-in-use series inks " + inkedColumns + " of " + w
                + " columns of the plotting area");
    }

    private static int group(Pattern p, String dom) {
        Matcher m = p.matcher(dom);
        assertTrue(m.find(), "no " + p + " in the page");
        return Integer.parseInt(m.group(1));
    }

    /** Loads {@code url} in headless Chromium and returns its DOM once its scripts have run for 5 s of page time. */
    static String dumpDom(Path chromium, Path profile, String url) throws IOException, InterruptedException {
        return load(chromium, profile, url, null);
    }

    /** Loads {@code url} in headless Chromium and returns its DOM; with {@code screenshot}, also takes one. */
    public static String load(Path chromium, Path profile, String url, Path screenshot)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage", "--user-data-dir=" + profile.resolve("profile"),
                "--window-size=1280,2400", "--hide-scrollbars", "--virtual-time-budget=5000", "--dump-dom"));
        if (screenshot != null) {
            cmd.add("--screenshot=" + screenshot);
        }
        cmd.add(url);
        Path out = profile.resolve("dom.html");
        Path err = profile.resolve("chromium.log");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish within 60 s");
        }
        assertEquals(0, p.exitValue(), () -> "chromium failed: " + read(err));
        return read(out);
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
