package dev.selene.node.admin;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A connection flood on a real node's admin server: thousands of connections that never finish a request must
 * neither lock out the probes nor stay open past the header-read deadline. Runs with the shipped limits.
 */
class AdminFloodTest {

    private static final int CONNECTIONS = 2_000;
    private static final int PROBES_PER_PATH = 5;
    private static final Duration PROBE_LIMIT = Duration.ofSeconds(1);
    private static final Duration HEADER_READ_TIMEOUT =
            AdminServer.limits(ConfigFactory.empty()).getDuration("header-read-timeout");

    /** What the half-sent connections send: a request line cut short, or headers never ended. */
    private static final List<String> PARTIAL_REQUESTS = List.of(
            "GET /hea",
            "GET /health HTTP/1.1\r\n",
            "GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\n",
            "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Partial: never-ends");

    @Test
    void healthAndReady_answerWithinASecond_with2000IdleConnectionsOpen_whichCloseAfterTheHeaderReadDeadline()
            throws IOException {
        try (TestNode node = new TestNode(Map.of())) {
            int port = node.node.adminPort();
            for (String path : List.of("/health", "/ready")) {
                get(node.base + path); // the first requests load classes and warm up; they are not measured
            }
            List<Socket> flood = new ArrayList<>(CONNECTIONS);
            try {
                long firstOpenedNanos = System.nanoTime();
                for (int i = 0; i < CONNECTIONS; i++) {
                    Socket s = new Socket();
                    flood.add(s);
                    s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
                    if (i % 2 == 1) {
                        s.getOutputStream().write(PARTIAL_REQUESTS.get(i / 2 % PARTIAL_REQUESTS.size())
                                .getBytes(StandardCharsets.US_ASCII));
                        s.getOutputStream().flush();
                    }
                }
                long floodedNanos = System.nanoTime();
                // The kernel completes connections faster than the server accepts them; this first request waits
                // for the server to accept those queued before it, so the probes below meet all 2,000 accepted.
                long settleNanos = get(node.base + "/health");
                System.out.printf(Locale.ROOT, "%d connections open (half of them half-sent) in %d ms; the first"
                                + " request after them answered in %d ms%n", CONNECTIONS,
                        (floodedNanos - firstOpenedNanos) / 1_000_000, settleNanos / 1_000_000);

                List<String> took = new ArrayList<>();
                for (int i = 0; i < PROBES_PER_PATH; i++) {
                    for (String path : List.of("/health", "/ready")) {
                        long nanos = get(node.base + path);
                        took.add(String.format(Locale.ROOT, "%.1f", nanos / 1e6));
                        assertTrue(nanos < PROBE_LIMIT.toNanos(), path + " took " + nanos / 1_000_000 + " ms");
                    }
                }
                System.out.println("probes with the flood open (/health, /ready, ...), ms: " + took);
                assertTrue(System.nanoTime() - firstOpenedNanos < HEADER_READ_TIMEOUT.toNanos(),
                        "the probes ran while every flood connection was still open");

                long closeByNanos = floodedNanos + HEADER_READ_TIMEOUT.plusSeconds(2).toNanos();
                sleepUntil(closeByNanos);
                for (int i = 0; i < CONNECTIONS; i++) {
                    assertClosedByServer(flood.get(i), i);
                }
                System.out.printf(Locale.ROOT, "every flood connection closed by the server within %d s%n",
                        HEADER_READ_TIMEOUT.plusSeconds(2).toSeconds());
            } finally {
                for (Socket s : flood) {
                    closeQuietly(s);
                }
            }
        }
    }

    /** GETs {@code url} on a fresh connection, asserts a 200 and returns the time taken. */
    private static long get(String url) {
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET()
                    .build();
            long start = System.nanoTime();
            HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString());
            long took = System.nanoTime() - start;
            assertEquals(200, r.statusCode(), url + ": " + r.body());
            return took;
        } catch (IOException e) {
            throw new AssertionError(url + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Asserts the server closed {@code s}: end of stream or a reset, and no answer before it. */
    private static void assertClosedByServer(Socket s, int index) throws IOException {
        s.setSoTimeout(5_000);
        InputStream in = s.getInputStream();
        try {
            int b = in.read();
            assertEquals(-1, b, "connection " + index + " got an answer instead of being closed");
        } catch (SocketTimeoutException e) {
            fail("connection " + index + " is still open after the header-read deadline");
        } catch (SocketException e) {
            // reset by the server: closed too
        }
    }

    private static void sleepUntil(long nanoTime) {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            try {
                Thread.sleep(Duration.ofNanos(left));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing is best effort
        }
    }
}
