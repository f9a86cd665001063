package dev.selene.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import dev.selene.actors.api.SettingsException;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.key.RecordKey;
import dev.selene.node.config.NodeSettings;
import dev.selene.node.config.SettingsLoader;
import dev.selene.node.manager.ManagerNode;
import dev.selene.transport.pool.LoopbackPorts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Two pool managers in this JVM (each its own cluster member on loopback) with their admin servers, reached through
 * a real HTTP client; a cache node whose settings file names them as its pool retires records to both.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ManagerAdminTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private ManagerNode first;
    private ManagerNode second;

    static int freePort() throws IOException {
        return LoopbackPorts.reserve();
    }

    /** A manager of the small layout on {@code port}, joining through {@code seed}, its admin server on any port. */
    static NodeSettings settings(int port, int seed) {
        return SettingsLoader.load(null, Map.of(
                "selene.layout", "small",
                "selene.manager.port", Integer.toString(port),
                "selene.manager.seeds", List.of("127.0.0.1:" + seed),
                "selene.manager.store-size", "4m",
                "selene.manager.admin-port", "0"));
    }

    @BeforeAll
    void start() throws IOException {
        int seed = freePort();
        first = ManagerNode.start(settings(seed, seed));
        second = ManagerNode.start(settings(freePort(), seed));
    }

    @AfterAll
    void stop() throws Exception {
        List<String> violations = new ArrayList<>();
        try {
            for (ManagerNode m : List.of(first, second)) {
                String v = m.node().checkInvariants().toCompletableFuture().get(10, TimeUnit.SECONDS);
                if (!v.isEmpty()) {
                    violations.add(m.clusterAddress() + ": " + v);
                }
            }
        } finally {
            second.close();
            first.close();
            http.close();
        }
        assertEquals(List.of(), violations, "store invariants after the tests");
    }

    private HttpResponse<String> get(ManagerNode m, String path) {
        return send(m, "GET", path, HttpRequest.BodyPublishers.noBody());
    }

    private HttpResponse<String> send(ManagerNode m, String method, String path, HttpRequest.BodyPublisher body) {
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + m.adminPort() + path))
                .timeout(Duration.ofSeconds(10)).method(method, body).build();
        try {
            return http.send(r, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(method + " " + path + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static JsonNode json(HttpResponse<String> r) {
        return TestNode.json(r, 200);
    }

    private JsonNode status(ManagerNode m) {
        return json(get(m, "/status"));
    }

    @Test
    void healthAndReady_answer200_onceTheManagerIsAnUpMember() {
        for (ManagerNode m : List.of(first, second)) {
            assertEquals("ok", json(get(m, "/health")).get("status").asText());
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() -> get(m, "/ready").statusCode() == 200);
            assertTrue(json(get(m, "/ready")).get("ready").asBoolean());
        }
    }

    @Test
    void status_showsTheStore_everyMemberWithItsRoles_andTheSettings() {
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() ->
                status(first).at("/cluster/members").size() == 2 && allUp(status(first)));
        JsonNode s = status(first);
        assertEquals("manager", s.at("/node/role").asText());
        assertEquals(first.clusterAddress(), s.at("/node/address").asText());
        assertEquals(4L << 20, s.at("/store/capacityBytes").asLong());
        assertEquals((4L << 20) / 8192, s.at("/store/slotsTotal").asLong());
        assertTrue(s.at("/store/records").isNumber());
        for (JsonNode member : s.at("/cluster/members")) {
            assertEquals("[\"manager\"]", member.get("roles").toString(), member.toString());
            assertEquals("Up", member.get("status").asText());
            assertTrue(member.get("reachable").asBoolean());
        }
        assertEquals(1, countSelf(s));
        assertEquals("small", s.at("/config/layout/name").asText());
        assertEquals(2, s.at("/config/replicas").asInt());
        assertEquals("off", s.at("/config/maxAge").asText());
    }

    private static boolean allUp(JsonNode status) {
        for (JsonNode m : status.at("/cluster/members")) {
            if (!m.get("status").asText().equals("Up")) {
                return false;
            }
        }
        return true;
    }

    private static int countSelf(JsonNode status) {
        int n = 0;
        for (JsonNode m : status.at("/cluster/members")) {
            n += m.get("self").asBoolean() ? 1 : 0;
        }
        return n;
    }

    @Test
    void theStatusPage_isServedWithItsScript_whichReadsStatus() {
        HttpResponse<String> page = get(first, "/");
        assertEquals(200, page.statusCode());
        assertTrue(page.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
        assertTrue(page.body().contains("<script src=\"/assets/manager.js\">"), page.body());
        HttpResponse<String> script = get(first, "/assets/manager.js");
        assertEquals(200, script.statusCode());
        assertTrue(script.body().contains("fetch('/status'"), "the page's figures come from /status");
    }

    @Test
    void theStatusPage_inChromium_showsTheStoreAndBothMembers(@TempDir Path profile) throws Exception {
        Optional<Path> chromium = StatusPageChromiumTest.chromium();
        assumeTrue(chromium.isPresent(), "no Chromium found (/usr/bin/chromium or $CHROMIUM); "
                + "install Debian's chromium package to run this test (.ci/run does)");
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() ->
                status(first).at("/cluster/members").size() == 2 && allUp(status(first)));
        String dom = StatusPageChromiumTest.dumpDom(chromium.get(), profile,
                "http://127.0.0.1:" + first.adminPort() + "/");
        assertTrue(dom.contains("data-members=\"2\""), dom);
        assertTrue(dom.contains(first.clusterAddress() + " · small · ready"), dom);
        assertTrue(dom.contains(second.clusterAddress().substring(second.clusterAddress().lastIndexOf(':'))), dom);
        assertTrue(dom.contains("(this manager)"), dom);
        assertTrue(dom.contains("4.0 MiB"), "the store's capacity: " + dom);
        assertEquals(-1, dom.indexOf("cannot reach the manager"));
    }

    @Test
    void everyRoute_rejectsAQueryParameterItDoesNotDefine_with400NamingIt() {
        for (String p : List.of("/", "/health", "/ready", "/metrics", "/status", "/assets/manager.js")) {
            JsonNode e = TestNode.json(get(first, p + "?colour=red"), 400);
            assertEquals("bad_request", e.get("error").asText(), p);
            assertEquals("query parameter 'colour' is unknown; allowed: none", e.get("detail").asText(), p);
        }
    }

    @Test
    void head_isAnsweredWhereverGetIs_withoutTheBody() {
        for (String p : List.of("/health", "/ready", "/metrics", "/status")) {
            HttpResponse<String> head = send(first, "HEAD", p, HttpRequest.BodyPublishers.noBody());
            assertEquals(200, head.statusCode(), p);
            assertEquals("", head.body(), p);
        }
    }

    @Test
    void aBodyOverTheLimit_isAJson413_declaredOrStreamed_andABodyWithinItIsRead() {
        byte[] big = new byte[20 * 1024];
        HttpResponse<String> declared = send(first, "GET", "/health", HttpRequest.BodyPublishers.ofByteArray(big));
        assertEquals(413, declared.statusCode(), declared.body());
        assertEquals("payload_too_large", TestNode.json(declared, 413).get("error").asText());
        HttpResponse<String> streamed = send(first, "GET", "/status",
                HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big)));
        assertEquals(413, streamed.statusCode(), streamed.body());
        assertEquals(200, send(first, "GET", "/health", HttpRequest.BodyPublishers.ofString("{}")).statusCode());
    }

    @Test
    void anUnknownPath_isAJson404() {
        HttpResponse<String> r = get(first, "/records");
        assertEquals(404, r.statusCode());
        assertTrue(r.body().startsWith("{\"status\":404"), r.body());
    }

    @Test
    void aCacheNodeWithThePoolInItsSettingsFile_retiresToBothManagers_restoresFromThem_andScrapesAsDocumented(
            @TempDir Path dir) throws Exception {
        Path conf = Files.writeString(dir.resolve("warm-pool.conf"), "selene { warm = 1m, pool.managers = [\""
                + first.clusterAddress() + "\", \"" + second.clusterAddress() + "\"] }");
        try (TestNode host = new TestNode(conf, Map.of())) {
            List<RecordKey> keys = host.publishChain("pooled", 1, 2, 3);
            HttpResponse<String> drained = host.send("POST", "/drain", TestNode.TOKEN, null);
            JsonNode d = json(drained);
            assertTrue(d.get("drained").asBoolean(), drained.body());
            assertEquals(3, d.get("written").asLong(), drained.body());

            JsonNode hs = json(host.get("/status"));
            assertEquals("memory+pool", hs.at("/node/shape").asText());
            JsonNode pool = hs.at("/tiers/2");
            assertEquals("pool", pool.get("tier").asText());
            assertTrue(pool.get("configured").asBoolean());
            assertEquals(2, pool.get("managers").size());
            assertEquals(2, pool.get("managersUp").size(), pool.toString());
            assertEquals(3, pool.get("retired").asLong(), pool.toString());
            // The tiers' figures come from the status sampled every 100 ms here (its counters are live).
            JsonNode sampled = await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(
                    () -> json(host.get("/status")).at("/tiers/2"), p -> p.get("records").asLong() == 3);
            assertTrue(sampled.get("bytesInUse").asLong() > 0 && sampled.get("capacityBytes").asLong() > 0,
                    "what it remembers retiring, and the most it remembers: " + sampled);
            assertTrue(pool.get("writeBytes").asLong() > 0);
            for (ManagerNode m : List.of(first, second)) {
                await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() ->
                        status(m).at("/store/records").asLong() == 3);
                assertEquals(3, status(m).at("/store/uploads").asLong());
            }
            checkMetrics(first);

            JsonNode described = json(host.get("/records/pooled/" + keys.get(2).hashHex()));
            assertEquals("[\"memory\",\"pool\"]", described.get("locations").toString(), described.toString());
            assertTrue(described.at("/record/durable").asBoolean(), described.toString());
            assertFalse(described.at("/record/onDisk").asBoolean(), "a node without a disk has no file of it");
            assertEquals(3, json(host.get("/records?tier=pool")).get("total").asLong());

            // The host forgets the chain (the pool keeps it), then restores it from the managers.
            JsonNode evicted = json(host.send("DELETE", "/records/pooled/" + keys.get(0).hashHex(), TestNode.TOKEN,
                    null));
            assertEquals(3, evicted.get("records").asLong(), evicted.toString());
            RestoreResult restored = host.restore("pooled", 1, 2, 3);
            assertEquals(3, restored.fromPool(), String.valueOf(restored));
            checkPoolHostMetrics(host);
        }
    }

    /**
     * A pool host's scrape against the node section of the catalogue (the tiers memory and pool), and the pool's own
     * series moved with what the host did: three records retired and read back from the pool.
     */
    private static void checkPoolHostMetrics(TestNode host) {
        String tag = host.metricsNode();
        Map<String, String> node = Map.of("node", tag);
        Scrape scrape = await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
                .until(() -> Scrape.parse(host.get("/metrics").body()),
                        s -> s.value("selene_restored_records_total", with(node, "tier", "pool")) >= 3
                                && s.value("selene_restore_latency_seconds_count", with(node, "source", "pool")) >= 1);
        MetricsScrapeTest.checkNode(scrape, tag, Set.of("memory", "pool"));
        // At least: a namesake node of the same tiers run earlier in this JVM would have left its counts.
        assertTrue(scrape.value("selene_pool_retirements_total", with(node, "outcome", "retired")) >= 3);
        assertTrue(scrape.value("selene_restores_total", with(with(node, "source", "pool"), "outcome",
                "restored")) >= 1);
        for (String direction : List.of("write", "read")) {
            assertTrue(scrape.value("selene_transfer_bytes_total", with(with(node, "tier", "pool"), "direction",
                    direction)) > 0, "pool bytes " + direction);
            assertTrue(scrape.value("selene_pool_busy_seconds_total", with(node, "direction", direction)) > 0,
                    "pool busy " + direction);
        }
        assertTrue(scrape.value("selene_pool_read_estimate_bytes_per_second", node) > 0);
    }

    private static Map<String, String> with(Map<String, String> labels, String key, String value) {
        Map<String, String> m = new HashMap<>(labels);
        m.put(key, value);
        return m;
    }

    /**
     * The manager's scrape against the manager section of the catalogue: every {@code selene_*} series of this
     * manager is documented there, with its type, HELP and labels; all but the expiries (which appear with the
     * first one) are exported; and the process's metrics follow, as documented.
     */
    private void checkMetrics(ManagerNode m) {
        Map<String, String> node = Map.of("node", m.node().address());
        Scrape scrape = await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
                .until(() -> Scrape.parse(get(m, "/metrics").body()),
                        s -> s.value("selene_pool_upload_latency_seconds_count", node) >= 3
                                && s.value("selene_pool_transfers_total", Map.of("node", m.node().address(),
                                "direction", "in")) >= 3
                                && s.value("selene_pool_records", node) == 3);
        Set<String> exported = new TreeSet<>();
        scrape.samples().stream().filter(s -> s.labels().entrySet().containsAll(node.entrySet()))
                .forEach(s -> exported.add(s.name().replaceFirst("_(bucket|sum|count)$", "")));
        Set<String> documented = MetricCatalogue.names(MetricCatalogue.MANAGER);
        assertTrue(documented.containsAll(exported), "undocumented: " + exported);
        Set<String> missing = new TreeSet<>(documented);
        missing.removeAll(exported);
        // The TLS and namespace-rule counters exist on a manager that runs TLS only (these managers run plain text
        // on loopback).
        assertEquals(Set.of("selene_pool_tls_refused_total", "selene_pool_access_refused_total"), missing,
                "documented but not exported");
        for (MetricCatalogue.Row row : MetricCatalogue.rows(MetricCatalogue.MANAGER)) {
            if (exported.contains(row.name())) {
                MetricCatalogue.check(row, scrape, node);
            }
        }
        MetricCatalogue.checkProcess(scrape);
    }

    @Test
    void aManagerThatStops_leavesTheCluster() throws IOException {
        ManagerNode third = ManagerNode.start(settings(freePort(), portOf(first)));
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() ->
                status(first).at("/cluster/members").size() == 3);
        third.close();
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() ->
                status(first).at("/cluster/members").size() == 2);
        assertEquals(0, status(first).at("/cluster/unreachable").asInt(), "it left; it was not lost");
    }

    private static int portOf(ManagerNode m) {
        String a = m.clusterAddress();
        return Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
    }

    @Test
    void aClusterPortInUse_isOneLineNamingTheSetting() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            SettingsException e = assertThrows(SettingsException.class,
                    () -> ManagerNode.start(settings(taken.getLocalPort(), taken.getLocalPort())));
            assertTrue(e.getMessage().startsWith("selene.manager.port = '" + taken.getLocalPort()
                    + "' is invalid: it cannot be bound on 127.0.0.1 ("), e.getMessage());
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
        }
    }
}
