package dev.selene.node.admin;

import dev.selene.engine.key.RecordKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The status page in real headless Chromium (Debian's {@code chromium}; {@code .ci/run} installs it): the page
 * loads from the node alone, the occupancy chart draws the sampled points, and a record search (from the URL)
 * shows the record's chain and actor trace. Skips, saying why, only when no Chromium can be found.
 */
class StatusPageChromiumTest {

    private static final Pattern CHART_POINTS = Pattern.compile("data-chart-points=\"(\\d+)\"");
    private static final Pattern TRACE_EVENTS = Pattern.compile("data-trace-events=\"(\\d+)\"");

    static Optional<Path> chromium() {
        String env = System.getenv("CHROMIUM");
        return Stream.concat(Stream.ofNullable(env), Stream.of("/usr/bin/chromium", "/usr/bin/chromium-browser",
                        "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"))
                .map(Path::of).filter(Files::isExecutable).findFirst();
    }

    @Test
    void thePageLoads_theChartDraws_andASearchShowsATrace(@TempDir Path profile) throws Exception {
        Optional<Path> chromium = chromium();
        assumeTrue(chromium.isPresent(), "no Chromium found (/usr/bin/chromium or $CHROMIUM); "
                + "install Debian's chromium package to run this test (.ci/run does)");
        try (TestNode node = new TestNode(Map.of())) {
            List<RecordKey> keys = node.publishChain("page", 7, 8, 9);
            RecordKey last = keys.getLast();
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    node.get("/status/history").body().split("\"epochMillis\"").length > 4);
            String dom = dumpDom(chromium.get(), profile, node.base + "/?ns=page&key=" + last.hashHex());

            int points = group(CHART_POINTS, dom);
            assertTrue(points >= 3, "the chart drew " + points + " points");
            assertTrue(dom.contains("drawn " + points + " points"), dom);
            int events = group(TRACE_EVENTS, dom);
            assertTrue(events >= 2, "the search showed " + events + " trace events");
            assertTrue(dom.contains("Catalog") && dom.contains("SlotPool"), "trace rows in the page");
            assertTrue(dom.contains(keys.getFirst().toString()), "the chain starts at the root");
            assertTrue(dom.contains("memory-only"), "the node line is filled");
            assertEquals(-1, dom.indexOf("cannot reach the node"));
        }
    }

    private static int group(Pattern p, String dom) {
        Matcher m = p.matcher(dom);
        assertTrue(m.find(), "no " + p + " in the page");
        return Integer.parseInt(m.group(1));
    }

    static String dumpDom(Path chromium, Path profile, String url) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage", "--user-data-dir=" + profile,
                "--virtual-time-budget=5000", "--dump-dom", url));
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
