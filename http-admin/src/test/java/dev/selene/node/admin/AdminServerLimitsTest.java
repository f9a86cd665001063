package dev.selene.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.SeleneCache;
import dev.selene.node.config.NodeSettings;
import dev.selene.node.config.SettingsLoader;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The admin server's limits, shortened through the actor system's configuration (the way an operator overrides
 * them), on a real node: the header-read deadline closes a client that dribbles its headers and a kept-alive
 * connection left idle, and a route slower than the request timeout answers a JSON 503.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminServerLimitsTest {

    private static final Duration HEADER_READ_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration REQUEST_TIMEOUT = Duration.ofMillis(500);
    /** Longer than any wait below: a connection closed here was closed by the deadline, not the idle timeout. */
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(20);

    private final SimulatedDevice device = SimulatedDevice.create();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private SeleneCache cache;
    private AdminServer server;

    @BeforeAll
    void start() {
        NodeSettings settings = SettingsLoader.load(null, Map.of("selene.layout", "small", "selene.warm", "1m",
                "selene.concurrency", "1", "selene.host-budget", "64m", "selene.device", "simulated",
                "selene.admin.port", "0", "selene.admin.token", TestNode.TOKEN));
        Config pekko = ConfigFactory.parseMap(Map.of(
                "selene-admin-server.header-read-timeout", HEADER_READ_TIMEOUT.toMillis() + "ms",
                "selene-admin-server.pekko-http-server.request-timeout", REQUEST_TIMEOUT.toMillis() + "ms",
                "selene-admin-server.pekko-http-server.idle-timeout", IDLE_TIMEOUT.toMillis() + "ms",
                "pekko.coordinated-shutdown.exit-jvm", "off")).withFallback(CacheSettings.standaloneSystemConfig());
        cache = SeleneCache.start(settings.cache(), device, pekko, "selene");
        Readiness readiness = new Readiness();
        readiness.ready();
        DrainHook neverDone = timeout -> new CompletableFuture<>();
        server = AdminServer.start(new AdminContext(cache, settings, new StatusHistory(10), neverDone, readiness,
                System.currentTimeMillis()));
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
        if (cache != null) {
            cache.close();
        }
        http.close();
        device.close();
    }

    @Test
    void aRouteSlowerThanTheRequestTimeout_answers503WithTheJsonErrorShape() throws Exception {
        HttpRequest drain = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/drain"))
                .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + TestNode.TOKEN)
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<String> r = http.send(drain, HttpResponse.BodyHandlers.ofString());
        assertEquals(503, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), r.body());
        JsonNode body = new ObjectMapper().readTree(r.body());
        assertEquals(503, body.get("status").asInt());
        assertEquals("timeout", body.get("error").asText());
    }

    @Test
    void aClientSendingItsHeadersAByteAtATime_isClosedAtTheHeaderReadDeadline() throws IOException {
        // Taken before the connection exists, so before the server's deadline starts: a stall of the test thread
        // after the connect cannot make the server look early.
        long start = System.nanoTime();
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(100);
            OutputStream out = s.getOutputStream();
            out.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
            long closedAfterNanos = -1;
            while (closedAfterNanos < 0 && System.nanoTime() - start < HEADER_READ_TIMEOUT.multipliedBy(5).toNanos()) {
                try {
                    out.write('a');
                    out.flush();
                    if (s.getInputStream().read() < 0) {
                        closedAfterNanos = System.nanoTime() - start;
                    }
                } catch (SocketTimeoutException stillOpen) {
                    // a byte every 100 ms: never idle
                } catch (IOException closed) {
                    closedAfterNanos = System.nanoTime() - start;
                }
            }
            System.out.printf(Locale.ROOT, "a byte every 100 ms: closed after %d ms%n", closedAfterNanos / 1_000_000);
            assertTrue(closedAfterNanos > 0, "still open after " + HEADER_READ_TIMEOUT.multipliedBy(5));
            assertTrue(closedAfterNanos >= HEADER_READ_TIMEOUT.minusMillis(100).toNanos(),
                    "closed before the deadline: " + closedAfterNanos / 1_000_000 + " ms");
        }
    }

    @Test
    void aKeptAliveConnection_servesRequestsWithinTheDeadline_andIsClosedWhenIdlePastIt() throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout((int) HEADER_READ_TIMEOUT.multipliedBy(5).toMillis());
            byte[] get = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
            long idleFrom = 0;
            for (int i = 0; i < 3; i++) {
                sleep(HEADER_READ_TIMEOUT.dividedBy(4));
                // Before the request, so before the server answers and restarts its deadline.
                idleFrom = System.nanoTime();
                s.getOutputStream().write(get);
                assertTrue(readAnswerHead(s.getInputStream()).startsWith("HTTP/1.1 200"), "answer " + i);
            }
            assertEquals(-1, s.getInputStream().read(), "closed without another answer");
            long idleNanos = System.nanoTime() - idleFrom;
            System.out.printf(Locale.ROOT, "kept-alive connection closed after %d ms idle%n", idleNanos / 1_000_000);
            assertTrue(idleNanos >= HEADER_READ_TIMEOUT.minusMillis(100).toNanos(), idleNanos / 1_000_000 + " ms");
        }
    }

    /** Reads an answer's head and its body of {@code Content-Length} bytes; returns the head. */
    private static String readAnswerHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed mid-answer: " + head.toString(StandardCharsets.ISO_8859_1));
            }
            head.write(b);
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        int length = text.lines().filter(l -> l.toLowerCase(Locale.ROOT).startsWith("content-length:"))
                .mapToInt(l -> Integer.parseInt(l.substring(l.indexOf(':') + 1).trim())).findFirst().orElse(0);
        in.readNBytes(length);
        return text;
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
