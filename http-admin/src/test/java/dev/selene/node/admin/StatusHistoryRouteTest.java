package dev.selene.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.actors.value.RetryReason;
import dev.selene.engine.key.RecordKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code GET /status/history} on a real node (rates, records per tier, events grouped by reason) and uPlot's files. */
class StatusHistoryRouteTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void history_groupsAbandonsByReason_andSamplesCarryRatesAndDiskRecords(@TempDir Path dir) throws Exception {
        try (TestNode node = new TestNode(Map.of("selene.disk.dir", dir.toString(), "selene.disk.size", "64m"))) {
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> node.get("/status/history").body().contains("\"epochMillis\""));
            RecordKey key = new RecordKey("gone", 1);
            for (int i = 0; i < 5; i++) {
                node.node.cache().reportAbandoned(key, RetryReason.NO_SPACE);
            }
            node.node.cache().reportAbandoned(key, RetryReason.INFLIGHT);
            node.publishChain("kept", 1, 2);
            // Events are grouped as they are reported; rates only once the sampler has taken a sample after the
            // publications: wait for both.
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                JsonNode hist = history(node);
                JsonNode groups = hist.get("eventsByReason");
                return groups.size() == 2 && groups.get(0).get("count").asInt() == 5
                        && groups.get(1).get("count").asInt() == 1 && published(hist) > 0;
            });
            JsonNode h = history(node);
            JsonNode first = h.get("eventsByReason").get(0);
            assertEquals("abandoned.no_space", first.get("counter").asText());
            assertEquals("abandoned", first.get("kind").asText());
            assertEquals("no_space", first.get("reason").asText());
            assertTrue(first.get("firstEpochMillis").asLong() <= first.get("lastEpochMillis").asLong());
            assertEquals("inflight", h.get("eventsByReason").get(1).get("reason").asText());

            JsonNode last = h.get("samples").get(h.get("samples").size() - 1);
            assertTrue(last.get("diskRecords").isInt(), "a node with a disk tier charts its records: " + last);
            for (String rate : StatusHistory.RATES.keySet()) {
                assertTrue(last.get("rates").get(rate).isNumber(), rate + " in " + last);
            }
            assertTrue(published(h) > 0, "the two publications show as a rate");
        }
    }

    /** The publications the history's samples show, summed over the samples (rate times interval). */
    private static double published(JsonNode history) {
        double published = 0;
        for (JsonNode s : history.get("samples")) {
            published += s.get("rates").path("publications").asDouble(0) * history.get("intervalMillis").asLong();
        }
        return published;
    }

    @Test
    void uPlot_isServedFromTheNode() {
        try (TestNode node = new TestNode(Map.of())) {
            HttpResponse<String> js = node.get("/assets/uplot/uPlot.iife.min.js");
            assertEquals(200, js.statusCode());
            assertTrue(js.headers().firstValue("Content-Type").orElse("").contains("javascript"), js.headers().toString());
            assertTrue(js.body().contains("uPlot"));
            HttpResponse<String> css = node.get("/assets/uplot/uPlot.min.css");
            assertEquals(200, css.statusCode());
            assertTrue(css.body().contains(".uplot"));
            assertEquals(200, node.get("/assets/app.js").statusCode(), "the page's own files still there");
            assertEquals(404, node.get("/assets/uplot/../../../../META-INF/MANIFEST.MF").statusCode());
        }
    }

    private static JsonNode history(TestNode node) throws Exception {
        return JSON.readTree(node.get("/status/history").body());
    }
}
