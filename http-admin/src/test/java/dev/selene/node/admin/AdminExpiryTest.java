package dev.selene.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.engine.key.RecordKey;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** POST /expire with max age on, its counter and status-page event; a node without a token refuses mutations. */
class AdminExpiryTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void expire_removesRecordsOlderThanMaxAge_andCountsThem() throws Exception {
        try (TestNode node = new TestNode(Map.of("selene.prefix-cache.max-age", "1ms"))) {
            // The status page counts events from its first sample on: let it take one before anything expires.
            await("a first status sample").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> node.get("/status/history").body().contains("\"epochMillis\""));
            List<RecordKey> keys = node.publishChain("old", 1, 2, 3);
            Thread.sleep(5); // older than the 1 ms max age; the sweep itself is tested with manual time
            JsonNode r = JSON.readTree(node.send("POST", "/expire", TestNode.TOKEN, null).body());
            assertTrue(r.get("maxAgeEnabled").asBoolean());
            assertEquals(3, r.get("expired").asInt());
            assertEquals(keys.getLast().toString(), r.get("keys").get(0).asText(), "descendants go first");
            assertEquals(404, node.get("/records/old/" + keys.getFirst().hashHex()).statusCode());
            await("the expiry counter exported").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                    .until(() -> Scrape.parse(node.get("/metrics").body()).value("selene_expired_total",
                            Map.of("node", node.metricsNode(), "tier", "memory")) >= 3);
            await("the expiry event on the status page").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(100)).until(() -> {
                        JsonNode events = JSON.readTree(node.get("/status/history").body()).get("events");
                        boolean event = false;
                        for (JsonNode e : events) {
                            event |= e.get("counter").asText().equals("expired.memory") && e.get("count").asInt() == 3;
                        }
                        return event;
                    });
            String trace = node.get("/trace/old/" + keys.getFirst().hashHex()).body();
            assertTrue(trace.contains("Expired"), trace);
        }
    }

    @Test
    void withoutAToken_mutatingEndpointsAreRefused() throws Exception {
        try (TestNode node = new TestNode(Map.of("selene.admin.token", ""))) {
            var r = node.send("POST", "/expire", "anything", null);
            assertEquals(403, r.statusCode());
            assertTrue(JSON.readTree(r.body()).get("detail").asText().contains("no admin token is configured"));
            assertFalse(r.body().contains("Exception"));
            assertEquals(200, node.get("/status").statusCode());
        }
    }
}
