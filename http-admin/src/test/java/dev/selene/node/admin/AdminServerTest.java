package dev.selene.node.admin;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.engine.key.RecordKey;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The admin HTTP API on a real server on a free loopback port, through a real HTTP client. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminServerTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private TestNode node;

    @BeforeAll
    void start() {
        node = new TestNode(Map.of());
    }

    @AfterAll
    void stop() {
        node.close();
    }

    private static JsonNode json(HttpResponse<String> r) {
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"),
                "JSON body expected: " + r.headers().map() + " " + r.body());
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + r.body(), e);
        }
    }

    /** Asserts a JSON error of {@code status} without a stack trace and returns its detail. */
    private static String error(HttpResponse<String> r, int status) {
        assertEquals(status, r.statusCode(), r.body());
        JsonNode body = json(r);
        assertEquals(status, body.get("status").asInt());
        assertFalse(body.get("error").asText().isEmpty());
        assertFalse(r.body().contains("\tat ") || r.body().contains("Exception"), r.body());
        return body.get("detail").asText();
    }

    private static String path(RecordKey k) {
        return k.namespace() + "/" + k.hashHex();
    }

    @Test
    void healthAndReady_answer200() {
        assertEquals("ok", json(node.get("/health")).get("status").asText());
        HttpResponse<String> ready = node.get("/ready");
        assertEquals(200, ready.statusCode());
        assertTrue(json(ready).get("ready").asBoolean());
    }

    @Test
    void status_showsTiersSlotsIntakeConfigAndCounters() {
        node.publishChain("status", 1, 2);
        JsonNode s = json(node.get("/status"));
        assertEquals("memory-only", s.at("/node/shape").asText());
        assertTrue(s.at("/slots/total").asInt() > 0);
        assertTrue(s.at("/slots/intake").asInt() > 0);
        assertTrue(s.at("/intake/bytes").asLong() > 0);
        assertEquals("memory", s.at("/tiers/0/tier").asText());
        assertEquals("small", s.at("/config/layout/name").asText());
        assertEquals("off", s.at("/config/maxAge").asText());
        assertTrue(s.at("/config/admin/tokenSet").asBoolean());
        assertFalse(s.toString().contains(TestNode.TOKEN), "the token is never shown");
        assertTrue(s.at("/counters/publish.stored").asLong() >= 2);
    }

    @Test
    void metrics_arePrometheusText_withSlotGaugesAndTheExpiryAndAbandonCounters() {
        node.publishChain("metrics", 1, 2, 3);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
            Scrape m = Scrape.parse(node.get("/metrics").body());
            String n = node.metricsNode();
            return m.value("selene_slots_capacity", Map.of("node", n)) > 0
                    && m.value("selene_slots_in_use", Map.of("node", n)) > 0
                    && m.value("selene_intake_slots", Map.of("node", n)) > 0
                    && m.value("selene_expired_total", Map.of("node", n, "tier", "memory")) >= 0
                    && m.value("selene_retry_abandoned_total", Map.of("node", n, "reason", "no_space")) >= 0
                    && m.value("selene_publications_total", Map.of("node", n, "result", "stored")) >= 3;
        });
        HttpResponse<String> r = node.get("/metrics");
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
        Set<String> process = MetricCatalogue.names(MetricCatalogue.PROCESS);
        for (String line : r.body().lines().toList()) {
            assertTrue(line.startsWith("#") || line.startsWith("selene_") || process.contains(line.split("[{ ]")[0]),
                    "only Selene's metrics and the process's: " + line);
        }
    }

    @Test
    void records_arePaged_andFiltered() {
        List<RecordKey> keys = node.publishChain("paging", 10, 11, 12, 13, 14);
        JsonNode first = json(node.get("/records?namespace=paging&limit=2"));
        assertEquals(5, first.get("total").asInt());
        assertEquals(2, first.get("records").size());
        JsonNode last = json(node.get("/records?namespace=paging&offset=4&limit=2"));
        assertEquals(1, last.get("records").size());
        List<String> all = new ArrayList<>();
        json(node.get("/records?namespace=paging&limit=1000")).get("records").forEach(r -> all.add(r.get("key").asText()));
        assertEquals(keys.stream().sorted((a, b) -> Long.compareUnsigned(a.hash(), b.hash()))
                .map(RecordKey::toString).toList(), all);
        assertEquals(5, json(node.get("/records?namespace=paging&tier=memory")).get("total").asInt());
        assertEquals(0, json(node.get("/records?namespace=paging&tier=disk")).get("total").asInt());
        assertEquals(0, json(node.get("/records?namespace=nothing-here")).get("total").asInt());
    }

    @Test
    void badPaging_is400() {
        for (String q : List.of("limit=0", "limit=1001", "limit=abc", "offset=-1", "offset=1e3", "tier=ssd",
                "namespace=b%40d", "colour=red")) {
            String detail = error(node.get("/records?" + q), 400);
            assertFalse(detail.isEmpty(), q);
        }
    }

    @Test
    void aRecord_showsItsChainAndLocation() {
        List<RecordKey> keys = node.publishChain("chain", 21, 22, 23);
        JsonNode r = json(node.get("/records/" + path(keys.get(2))));
        assertEquals("resident", r.get("state").asText());
        assertEquals("memory", r.get("locations").get(0).asText());
        assertTrue(r.get("chainComplete").asBoolean());
        assertEquals(3, r.get("chain").size());
        assertEquals(keys.get(0).toString(), r.get("chain").get(0).get("key").asText());
        assertTrue(r.get("record").get("hasRow").asBoolean());
    }

    @Test
    void unknownOrMalformedRecords_are404Or400() {
        error(node.get("/records/chain/00000000deadbeef"), 404);
        error(node.get("/records/chain/not-hex"), 400);
        error(node.get("/records/chain/0123456789abcdef0"), 400);
        error(node.get("/records/b%40d/00000000deadbeef"), 400);
        error(node.get("/trace/chain/00000000deadbeef"), 404);
        error(node.get("/trace/chain/zz"), 400);
        error(node.get("/records/chain"), 404);
        error(node.get("/no/such/thing"), 404);
        error(node.send("PUT", "/health", null, null), 405);
    }

    @Test
    void trace_saysWhichActorHandledWhichMessageAndWhen() {
        List<RecordKey> keys = node.publishChain("trace", 31);
        JsonNode t = json(node.get("/trace/" + path(keys.getFirst())));
        List<String> actors = new ArrayList<>();
        t.get("events").forEach(e -> {
            actors.add(e.get("actor").asText());
            assertTrue(e.get("epochMillis").asLong() > 0);
            assertFalse(e.get("message").asText().isEmpty());
        });
        assertTrue(actors.contains("RecordActor"), actors.toString());
        assertTrue(actors.contains("Catalog"), actors.toString());
    }

    @Test
    void actors_showTheTree() {
        JsonNode a = json(node.get("/actors"));
        assertEquals("HostCache", a.at("/root/kind").asText());
        List<String> children = new ArrayList<>();
        a.at("/root/children").forEach(c -> children.add(c.get("name").asText()));
        assertTrue(children.contains("catalog"), children.toString());
    }

    @Test
    void mutatingEndpoints_needTheBearerToken() {
        for (String[] m : List.of(new String[] {"POST", "/drain"}, new String[] {"POST", "/expire"},
                new String[] {"DELETE", "/records/tok/00000000000000aa"})) {
            HttpResponse<String> missing = node.send(m[0], m[1], null, null);
            error(missing, 401);
            assertTrue(missing.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Bearer"));
            error(node.send(m[0], m[1], "wrong-token", null), 403);
        }
        JsonNode drained = json(node.send("POST", "/drain", TestNode.TOKEN, null));
        assertFalse(drained.get("drained").asBoolean());
        assertTrue(drained.get("detail").asText().contains("nothing is parked"));
        JsonNode expired = json(node.send("POST", "/expire", TestNode.TOKEN, null));
        assertFalse(expired.get("maxAgeEnabled").asBoolean());
        assertEquals(0, expired.get("expired").asInt());
    }

    @Test
    void delete_evictsARecordAndItsDescendants() {
        List<RecordKey> keys = node.publishChain("evict", 41, 42, 43);
        JsonNode r = json(node.send("DELETE", "/records/" + path(keys.get(1)), TestNode.TOKEN, null));
        assertEquals(2, r.get("records").asInt());
        error(node.get("/records/" + path(keys.get(2))), 404);
        assertEquals(200, node.get("/records/" + path(keys.get(0))).statusCode());
        error(node.send("DELETE", "/records/" + path(keys.get(1)), TestNode.TOKEN, null), 404);
        error(node.send("DELETE", "/records/evict/xyz", TestNode.TOKEN, null), 400);
    }

    @Test
    void oversizedBodies_are413_declaredOrStreamed() {
        byte[] big = new byte[20 * 1024];
        error(node.send("POST", "/expire", TestNode.TOKEN, HttpRequest.BodyPublishers.ofByteArray(big)), 413);
        HttpRequest.BodyPublisher chunked = HttpRequest.BodyPublishers.ofInputStream(
                () -> new ByteArrayInputStream(big));
        error(node.send("POST", "/expire", TestNode.TOKEN, chunked), 413);
        assertEquals(200, node.send("POST", "/expire", TestNode.TOKEN,
                HttpRequest.BodyPublishers.ofString("{}")).statusCode());
    }

    @Test
    void urlHost_bracketsAnIPv6Literal_only() {
        assertEquals("[::1]", AdminServer.urlHost("::1"));
        assertEquals("[::1]", AdminServer.urlHost("[::1]"));
        assertEquals("127.0.0.1", AdminServer.urlHost("127.0.0.1"));
        assertEquals("localhost", AdminServer.urlHost("localhost"));
    }

    @Test
    void head_isAnsweredWhereverGetIs_withoutTheBody() {
        for (String p : List.of("/health", "/ready", "/metrics", "/status")) {
            HttpResponse<String> head = node.send("HEAD", p, null, null);
            assertEquals(200, head.statusCode(), p);
            assertEquals("", head.body(), p);
            assertEquals(node.get(p).headers().firstValue("Content-Type"), head.headers().firstValue("Content-Type"),
                    p);
        }
        assertEquals(405, node.send("HEAD", "/drain", null, null).statusCode(), "no GET there");
    }

    @Test
    void mutatingEndpoints_refuseABodyWithParameters_with400_andDoNothing() {
        List<RecordKey> keys = node.publishChain("bodies", 51, 52);
        for (String[] m : List.of(new String[] {"POST", "/drain"}, new String[] {"POST", "/expire"},
                new String[] {"DELETE", "/records/" + path(keys.get(0))})) {
            HttpResponse<String> r = node.send(m[0], m[1], TestNode.TOKEN,
                    HttpRequest.BodyPublishers.ofString("{\"maxAge\": \"1s\"}"));
            assertEquals("this endpoint takes no parameters: send no body (or {}); got 16 bytes", error(r, 400),
                    m[0] + " " + m[1]);
        }
        assertEquals(200, node.get("/records/" + path(keys.get(0))).statusCode(), "the refused DELETE removed nothing");
        assertEquals(200, node.send("POST", "/expire", TestNode.TOKEN,
                HttpRequest.BodyPublishers.ofString(" { \n } ")).statusCode(), "an empty object is no parameter");
    }

    @Test
    void aMalformedRequestLine_getsAJsonError() throws IOException {
        try (Socket s = new Socket("127.0.0.1", node.node.adminPort())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write("GARBAGE / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String response = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(response.startsWith("HTTP/1.1 400"), response);
            assertTrue(response.contains("application/json"), response);
            assertTrue(response.contains("\"error\""), response);
        }
    }

    @Test
    void everyRoute_rejectsAQueryParameterItDoesNotDefine_with400NamingIt() {
        List<String> gets = List.of("/", "/health", "/ready", "/metrics", "/status", "/status/history", "/actors",
                "/assets/app.js", "/assets/uplot/uPlot.min.css", "/records", "/records/params/00000000000000aa",
                "/trace/params/00000000000000aa", "/traces");
        for (String p : gets) {
            HttpResponse<String> r = node.get(p + "?colour=red");
            assertEquals("bad_request", json(r).get("error").asText(), p);
            assertTrue(error(r, 400).startsWith("query parameter 'colour' is unknown; allowed: "), p);
        }
        for (String[] m : List.of(new String[] {"POST", "/drain"}, new String[] {"POST", "/expire"},
                new String[] {"DELETE", "/records/params/00000000000000aa"})) {
            HttpResponse<String> r = node.send(m[0], m[1] + "?x=1", TestNode.TOKEN, null);
            assertEquals("query parameter 'x' is unknown; allowed: none", error(r, 400), m[0] + " " + m[1]);
        }
        assertEquals(200, node.get("/?ns=params&key=aa&tier=disk&namespace=params&offset=0&limit=20").statusCode(),
                "the status page's own parameters");
        for (String stray : List.of("/status?&", "/metrics?", "/records?limit=5&", "/health?&&")) {
            assertEquals(200, node.get(stray).statusCode(), stray + ": a stray '&' names no parameter");
        }
    }

    @Test
    void aRepeatedAuthorizationHeader_is400_whicheverComesFirst() throws Exception {
        for (String[] order : List.of(new String[] {TestNode.TOKEN, "wrong"}, new String[] {"wrong", TestNode.TOKEN})) {
            java.net.http.HttpRequest twice = java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create(node.base + "/expire"))
                    .POST(java.net.http.HttpRequest.BodyPublishers.noBody())
                    .header("Authorization", "Bearer " + order[0]).header("Authorization", "Bearer " + order[1])
                    .build();
            HttpResponse<String> r = node.http.send(twice, HttpResponse.BodyHandlers.ofString());
            assertEquals("the Authorization header is repeated; allowed: once", error(r, 400), order[0]);
        }
    }

    @Test
    void aRepeatedQueryParameter_is400NamingIt() {
        Map<String, String> repeated = Map.of("/records?limit=1&limit=2", "limit",
                "/records?tier=memory&offset=0&tier=memory", "tier", "/traces?prefix=a&prefix=b", "prefix",
                "/?ns=a&ns=b", "ns");
        repeated.forEach((p, name) -> assertEquals("query parameter '" + name + "' is repeated; allowed: once",
                error(node.get(p), 400), p));
    }

    /** Sends {@code bytes} on a fresh connection and returns what the server answers before it closes. */
    private String raw(String bytes) throws IOException {
        try (Socket s = new Socket("127.0.0.1", node.node.adminPort())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(bytes.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void aRequestLineWithoutSpaces_getsA400JsonAtOnce_notTheHeaderDeadline() throws IOException {
        for (String line : List.of("GARBAGE\r\n\r\n", "GET\r\n\r\n", "\r\n\r\n", "G\r\n\r\n")) {
            long start = System.nanoTime();
            String response = raw(line);
            long millis = (System.nanoTime() - start) / 1_000_000;
            String shown = line.replace("\r", "\\r").replace("\n", "\\n");
            assertTrue(response.startsWith("HTTP/1.1 400"), shown + ": " + response);
            assertTrue(response.contains("application/json") && response.contains("\"unknown_method\""),
                    shown + ": " + response);
            assertTrue(millis < 3000, shown + " answered after " + millis + " ms");
        }
        assertTrue(raw("FOO /health HTTP/1.1\r\nHost: x\r\n\r\n").contains("\"unknown_method\""));
        assertTrue(raw("PROPFIND /health HTTP/1.1\r\nHost: x\r\n\r\n").contains("\"unknown_method\""));
    }

    @Test
    void aDoubleSpaceInTheRequestLine_is400SayingTheRequestLineIsMalformed() throws IOException {
        String response = raw("GET  /health HTTP/1.1\r\nHost: x\r\n\r\n");
        assertTrue(response.startsWith("HTTP/1.1 400"), response);
        assertTrue(response.contains("malformed"), response);
    }

    @Test
    void aTraversalSegmentUnderAssets_is404_withoutAWarningInTheLog() {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> warnings = new ListAppender<>();
        warnings.start();
        root.addAppender(warnings);
        try {
            for (String p : List.of("/assets/uplot/%2e%2e%2f%2e%2e%2fselene-admin%2fapp.js", "/assets/%2e%2e/x",
                    "/assets/uplot/..%2FuPlot.min.css")) {
                assertEquals("not_found", json(node.get(p)).get("error").asText(), p);
                error(node.get(p), 404);
            }
            assertEquals(200, node.get("/assets/uplot/uPlot.min.css").statusCode());
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> {
                synchronized (warnings.list) {
                    return warnings.list.stream().noneMatch(e -> e.getFormattedMessage().contains("suspicious"));
                }
            });
        } finally {
            root.detachAppender(warnings);
        }
    }

    @Test
    void history_keepsSamplesForTheStatusPage() {
        await().atMost(Duration.ofSeconds(5)).until(() -> json(node.get("/status/history")).get("samples").size() >= 3);
        JsonNode h = json(node.get("/status/history"));
        assertEquals(100, h.get("intervalMillis").asInt());
        assertTrue(h.get("samples").get(0).get("totalSlots").asInt() > 0);
    }
}
