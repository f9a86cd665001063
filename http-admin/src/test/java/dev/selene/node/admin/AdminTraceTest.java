package dev.selene.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Actor traces and the actor census through a real node's admin server:
 * {@code /trace}, {@code /traces}, {@code /actors}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminTraceTest {

    private static final String MICROSECOND_TIME = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z";

    private TestNode node;

    @BeforeAll
    void start() {
        node = new TestNode(Map.of());
    }

    @AfterAll
    void stop() {
        node.close();
    }

    private JsonNode events(RecordKey key) {
        return TestNode.json(node.get("/trace/" + key.namespace() + "/" + key.hashHex()), 200).get("events");
    }

    /** Publishes {@code key} once more (the content a chain of one publishes) and returns the answer. */
    private PublishResult publishAgain(RecordKey key) {
        long base = node.device.allocateDevice(DevicePlacement.bytesNeeded(node.layout(), true));
        try {
            DevicePlacement p = DevicePlacement.contiguous(node.layout(), base, true);
            KeyedContent.fillRecord(node.device, node.layout(), p, key, true);
            return node.node.cache().publish(new RecordSpec(key, null, true), p).toCompletableFuture().join();
        } finally {
            node.device.freeDevice(base);
        }
    }

    @Test
    void trace_eventsHaveMicrosecondTimesGapsOutcomesPaths_andOneCorrelationPerPublication() {
        RecordKey key = node.publishChain("corr", 41).getFirst();
        JsonNode events = events(key);

        Set<Long> correlations = new HashSet<>();
        List<String> outcomes = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            JsonNode e = events.get(i);
            assertTrue(e.get("time").asText().matches(MICROSECOND_TIME), e.toString());
            assertEquals(e.get("epochMicros").asLong() / 1000, e.get("epochMillis").asLong());
            if (i == 0) {
                assertTrue(e.get("sinceMicros").isNull(), e.toString());
            } else {
                assertEquals(e.get("epochMicros").asLong() - events.get(i - 1).get("epochMicros").asLong(),
                        e.get("sinceMicros").asLong(), 1, e.toString());
            }
            correlations.add(e.get("correlation").asLong());
            if (!e.get("outcome").isNull()) {
                outcomes.add(e.get("outcome").asText());
            }
            String path = e.get("path").asText();
            switch (e.get("actor").asText()) {
                case "RecordActor" -> assertTrue(path.startsWith("/user/catalog/$"), path);
                case "Catalog" -> assertEquals("/user/catalog", path);
                default -> { }
            }
        }
        assertEquals(1, correlations.size(), events.toString());
        assertNotEquals(0L, correlations.iterator().next());
        assertEquals(List.of("Stored"), outcomes, events.toString());

        assertInstanceOf(PublishResult.Present.class, publishAgain(key));
        JsonNode last = events(key).get(events(key).size() - 1);
        assertEquals("Present", last.get("outcome").asText());
        assertFalse(correlations.contains(last.get("correlation").asLong()), "a new publication, a new id");
    }

    @Test
    void trace_ofARestore_sharesOneCorrelationBetweenTheRestoreAndItsTask() {
        RecordKey key = node.publishChain("rest", 51).getFirst();
        long published = events(key).get(0).get("correlation").asLong();
        assertEquals(RestoreResult.Outcome.RESTORED, node.restore("rest", 51).outcome());

        Set<Long> restoreIds = new HashSet<>();
        Set<String> actors = new HashSet<>();
        String outcome = null;
        for (JsonNode e : events(key)) {
            if (e.get("correlation").asLong() != published) {
                restoreIds.add(e.get("correlation").asLong());
                actors.add(e.get("actor").asText());
                outcome = e.get("outcome").isNull() ? outcome : e.get("outcome").asText();
            }
        }
        assertEquals(1, restoreIds.size(), events(key).toString());
        assertEquals(Set.of("Catalog", "RestoreTask"), actors);
        assertEquals("Restored", outcome);
    }

    @Test
    void traces_findRecordsByNamespaceAndKeyPrefix_mostRecentFirst() {
        List<RecordKey> a = node.publishChain("find-a", 61, 62, 63);
        node.publishChain("find-b", 64);

        JsonNode inA = TestNode.json(node.get("/traces?namespace=find-a"), 200);
        List<String> keys = new ArrayList<>();
        inA.get("traces").forEach(t -> keys.add(t.get("key").asText()));
        assertEquals(a.reversed().stream().map(RecordKey::toString).toList(), keys);
        assertTrue(inA.at("/traces/0/events/0/actor").isTextual());

        String prefix = a.get(1).hashHex().substring(0, 6);
        JsonNode byPrefix = TestNode.json(node.get("/traces?prefix=" + prefix.toUpperCase()), 200);
        assertTrue(byPrefix.get("traces").size() >= 1);
        byPrefix.get("traces").forEach(t -> assertTrue(t.get("key").asText().contains("/" + prefix), t.toString()));

        assertEquals(1, TestNode.json(node.get("/traces?namespace=find-a&limit=1"), 200).get("traces").size());
        assertEquals(0, TestNode.json(node.get("/traces?namespace=find-none"), 200).get("traces").size());
    }

    @Test
    void traces_badParameters_are400WithAJsonError() {
        for (String q : List.of("limit=0", "limit=201", "limit=x", "prefix=xyz", "prefix=0123456789abcdef0",
                "namespace=b%40d", "key=1")) {
            JsonNode e = TestNode.json(node.get("/traces?" + q), 400);
            assertEquals("bad_request", e.get("error").asText(), q);
            assertFalse(e.get("detail").asText().contains("Exception"), q);
        }
    }

    @Test
    void traces_anEmptyPrefix_is400_asAnEmptyNamespaceIs() {
        for (String q : List.of("prefix=", "prefix", "namespace=")) {
            JsonNode e = TestNode.json(node.get("/traces?" + q), 400);
            assertEquals("bad_request", e.get("error").asText(), q);
        }
        assertEquals("key prefix '' is invalid; allowed: 1..16 hex digits",
                TestNode.json(node.get("/traces?prefix="), 400).get("detail").asText());
    }

    @Test
    void actors_listsEveryKindWithMailboxAndHandledCounts() {
        node.publishChain("census", 71);
        JsonNode a = TestNode.json(node.get("/actors"), 200);
        Map<String, JsonNode> kinds = new HashMap<>();
        a.get("kinds").forEach(k -> kinds.put(k.get("kind").asText(), k));
        for (String kind : List.of("HostCache", "Catalog")) {
            JsonNode k = kinds.get(kind);
            assertTrue(k != null, kind + " missing: " + a.get("kinds"));
            assertEquals(1, k.get("actors").asInt(), kind);
            assertTrue(k.get("handled").asLong() > 0, kind);
            assertTrue(k.hasNonNull("mailbox") && k.get("mailbox").isIntegralNumber()
                    && k.get("mailbox").asLong() >= 0, kind + " has a mailbox count: " + k);
        }
        assertTrue(kinds.get("RecordActor").get("handled").asLong() > 0, "record actors handled messages");
        assertEquals("HostCache", a.at("/root/kind").asText());
        assertTrue(a.at("/root/mailbox").isInt());
        assertTrue(a.get("actors").asInt() >= 3);
    }
}
