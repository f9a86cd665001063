package dev.selene.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Generated admin requests against one real node: known and random paths (percent-encodings valid and invalid,
 * {@code %00}, traversal, very long and unicode segments), odd and repeated query parameters of
 * {@code /records}, record and trace paths of real and made-up keys, every method and a few HTTP does not define,
 * with and without the token and a body. Each answer is below 500 (400 for a method HTTP does not define), and each
 * error is
 * the JSON error shape. A request that {@link URI} refuses (an invalid escape, raw unicode) goes over a plain
 * socket, the rest through {@link java.net.http.HttpClient}.
 */
class AdminRequestFuzzTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration ANSWER_LIMIT = Duration.ofSeconds(10);
    private static final int MAX_RESPONSE_HEAD_BYTES = 64 * 1024;
    /** The node's request body limit, small so that a body over it is small too. */
    private static final int MAX_BODY_BYTES = 1024;

    private static final List<String> ROUTES = List.of("", "health", "ready", "metrics", "status", "records", "trace",
            "traces", "actors", "drain", "expire", "assets");

    /**
     * The methods HTTP defines. Any other is the client's bad input: 400 with the JSON error {@code unknown_method}.
     */
    private static final Set<String> HTTP_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT",
            "OPTIONS", "TRACE", "PATCH");

    private static TestNode node;
    private static List<String> keys;

    /** One generated request; {@code raw} sends it over a plain socket even when {@link URI} would take it. */
    record AdminRequest(String method, String target, boolean withToken, String body, boolean raw) {
    }

    /** The parts of an answer the property looks at. */
    record Answer(int status, String contentType, String body) {
    }

    @BeforeContainer
    static void start() {
        node = new TestNode(Map.of("selene.admin.max-body", String.valueOf(MAX_BODY_BYTES)));
        keys = new ArrayList<>();
        node.publishChain("fuzz", 1, 2, 3).forEach(k -> keys.add(k.hashHex()));
    }

    @AfterContainer
    static void stop() {
        if (node != null) {
            node.close();
        }
    }

    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void anyPathQueryOrMethod_answersBelow500_anUnknownMethod400_andEveryErrorIsJson(@ForAll("requests") AdminRequest request) {
        Answer a = send(request);
        Statistics.label("status").collect(a.status());
        Statistics.label("client").collect(request.raw() || !uriAccepts(request.target()) ? "socket" : "HttpClient");
        String route = request.target().split("[/?]", 3)[1];
        Statistics.label("route").collect(ROUTES.contains(route) ? route : "other");
        assertTrue(a.status() < 500, () -> a.status() + " for " + request + ": " + a.body());
        if (!HTTP_METHODS.contains(request.method())) {
            assertEquals(400, a.status(), () -> "a method HTTP does not define: " + request + ": " + a.body());
        }
        if (a.status() >= 400 && !request.method().equals("HEAD")) {
            assertTrue(a.contentType().startsWith("application/json"),
                    () -> "JSON expected for " + request + ": " + a.contentType() + " " + a.body());
            JsonNode body;
            try {
                body = JSON.readTree(a.body());
            } catch (IOException e) {
                throw new AssertionError("not JSON for " + request + ": " + a.body(), e);
            }
            assertEquals(a.status(), body.path("status").asInt(), a.body());
            assertFalse(body.path("error").asText().isEmpty(), a.body());
        }
    }

    // --- generators ---------------------------------------------------------------------------------------------

    @Provide
    Arbitrary<AdminRequest> requests() {
        Arbitrary<String> method = Arbitraries.frequency(Tuple.of(16, "GET"), Tuple.of(3, "DELETE"),
                Tuple.of(3, "POST"), Tuple.of(1, "PUT"), Tuple.of(1, "PATCH"), Tuple.of(1, "HEAD"),
                Tuple.of(1, "OPTIONS"), Tuple.of(1, "TRACE"), Tuple.of(1, "FOO"), Tuple.of(1, "get"),
                Tuple.of(1, "PROPFIND"));
        Arbitrary<String> body = Arbitraries.frequency(Tuple.of(6, ""), Tuple.of(1, "{}"), Tuple.of(1, "[1, 2"),
                Tuple.of(1, "x".repeat(2 * MAX_BODY_BYTES)));
        return Combinators.combine(method, path(), query(), Arbitraries.of(true, false), body,
                        Arbitraries.integers().between(0, 4))
                .as((m, p, q, token, b, rawDie) -> new AdminRequest(m, p + q, token, m.equals("GET") ? "" : b,
                        rawDie == 0));
    }

    /** A route's path with made-up parts, or a path of random segments. */
    private Arbitrary<String> path() {
        Arbitrary<String> namespace = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.just("fuzz")),
                Tuple.of(2, segment()));
        Arbitrary<String> key = Arbitraries.frequencyOf(Tuple.of(2, Arbitraries.of(keys)),
                Tuple.of(2, Arbitraries.strings().withChars("0123456789abcdefABCDEF").ofMinLength(1).ofMaxLength(20)),
                Tuple.of(2, segment()));
        Arbitrary<String> record = Combinators.combine(Arbitraries.of("records", "trace"), namespace, key)
                .as((route, ns, k) -> "/" + route + "/" + ns + "/" + k);
        Arbitrary<String> fixed = Arbitraries.of("/", "/health", "/ready", "/metrics", "/status", "/status/history",
                "/records", "/traces", "/drain", "/expire", "/actors", "/assets/app.js", "/assets/style.css");
        Arbitrary<String> known = Arbitraries.of("health", "ready", "metrics", "status", "history", "records",
                "trace", "traces", "drain", "expire", "assets", "actors", "fuzz", "index.html", "app.js", "..", ".",
                "");
        Arbitrary<String> anySegment = Arbitraries.frequencyOf(Tuple.of(2, known), Tuple.of(1, Arbitraries.of(keys)),
                Tuple.of(3, segment()));
        Arbitrary<String> random = anySegment.list().ofMinSize(1).ofMaxSize(5).map(l -> "/" + String.join("/", l));
        Arbitrary<String> route = Arbitraries.frequencyOf(Tuple.of(3, fixed), Tuple.of(3, Arbitraries.just("/records")),
                Tuple.of(4, record), Tuple.of(3, random));
        return Combinators.combine(route, Arbitraries.integers().between(0, 9))
                .as((p, shape) -> shape == 0 && !p.endsWith("/") ? p + "/" : p);
    }

    /** One path segment or query value: plain, hex, unicode, long, or escapes valid and not. */
    private Arbitrary<String> segment() {
        Arbitrary<String> text = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.strings().alpha().numeric().withChars("-._~").ofMinLength(1).ofMaxLength(20)),
                Tuple.of(2, Arbitraries.strings().withChars("0123456789abcdefABCDEF").ofMinLength(1).ofMaxLength(20)),
                Tuple.of(2, Arbitraries.strings().all().ofMinLength(1).ofMaxLength(12)),
                Tuple.of(1, Arbitraries.integers().between(100, 3_000).map("n"::repeat)));
        Arbitrary<String> encoded = Combinators.combine(text, Arbitraries.of(true, false))
                .as((t, literal) -> encode(t, literal));
        Arbitrary<String> escapes = Arbitraries.of("%zz", "%", "%0", "%00", "%2F", "%2f", "%2e%2e", "%C3%28",
                "%ff", "%E2%82", "%u0041", "%252e", "..%2F..%2Fetc", "%0d%0a", "a%20b").list().ofMinSize(1)
                .ofMaxSize(3).map(l -> String.join("", l));
        return Arbitraries.frequencyOf(Tuple.of(5, encoded), Tuple.of(2, escapes));
    }

    private Arbitrary<String> query() {
        Arbitrary<String> name = Arbitraries.frequencyOf(
                Tuple.of(6, Arbitraries.of("tier", "namespace", "limit", "offset", "prefix", "page", "")),
                Tuple.of(1, segment()));
        Arbitrary<String> value = Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.of("memory", "disk", "pool", "MEMORY", "Disk", "bogus", "fuzz", "0", "1",
                        "-1", "1000", "1001", "2147483647", "2147483648", "9223372036854775808", "1e3", "0x10",
                        "+5", "%20", "", "%D9%A1%D9%A2")),
                Tuple.of(2, Arbitraries.integers().between(-10, 2_000).map(String::valueOf)),
                Tuple.of(1, Arbitraries.longs().map(String::valueOf)),
                Tuple.of(2, segment()));
        Arbitrary<String> param = Combinators.combine(name, value, Arbitraries.integers().between(0, 5))
                .as((n, v, shape) -> shape == 0 ? n : n + "=" + v);
        Arbitrary<String> separator = Arbitraries.of("&", "&", "&", ";", "&&");
        return Combinators.combine(param.list().ofMaxSize(5), separator, Arbitraries.integers().between(0, 5))
                .as((params, sep, shape) -> params.isEmpty()
                        ? (shape == 0 ? "?" : "")
                        : "?" + String.join(sep, params));
    }

    /**
     * {@code text} as a path segment: unreserved characters as they are; the others percent-encoded as UTF-8, or
     * (when {@code literal}) left as they are except controls, space and the characters that end a segment.
     */
    private static String encode(String text, boolean literal) {
        StringBuilder sb = new StringBuilder();
        text.codePoints().forEach(cp -> {
            boolean unreserved = cp < 128 && (Character.isLetterOrDigit(cp) || "-._~".indexOf(cp) >= 0);
            boolean keep = unreserved || (literal && cp > ' ' && cp != 127 && "/?#%".indexOf(cp) < 0);
            if (keep) {
                sb.appendCodePoint(cp);
            } else {
                for (byte b : new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8)) {
                    sb.append('%').append(String.format(Locale.ROOT, "%02X", b & 0xff));
                }
            }
        });
        return sb.toString();
    }

    // --- sending ------------------------------------------------------------------------------------------------

    private static Answer send(AdminRequest r) {
        return r.raw() || !uriAccepts(r.target()) ? sendOverSocket(r) : sendWithHttpClient(r);
    }

    /** Whether {@link URI} takes {@code target} as it is, in ASCII (it would re-encode anything else). */
    private static boolean uriAccepts(String target) {
        if (!StandardCharsets.US_ASCII.newEncoder().canEncode(target)) {
            return false;
        }
        try {
            URI.create(node.base + target);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static Answer sendWithHttpClient(AdminRequest r) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(node.base + r.target())).timeout(ANSWER_LIMIT)
                .method(r.method(), r.body().isEmpty() ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(r.body()));
        if (r.withToken()) {
            b.header("Authorization", "Bearer " + TestNode.TOKEN);
        }
        try {
            HttpResponse<String> a = node.http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(a.statusCode(), a.headers().firstValue("Content-Type").orElse(""), a.body());
        } catch (IOException e) {
            throw new AssertionError(r + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Sends {@code r} as HTTP/1.1 bytes on a fresh connection and reads one answer. */
    private static Answer sendOverSocket(AdminRequest r) {
        byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
        StringBuilder head = new StringBuilder(r.method()).append(' ').append(r.target()).append(" HTTP/1.1\r\n")
                .append("Host: 127.0.0.1:").append(node.node.adminPort()).append("\r\nConnection: close\r\n");
        if (r.withToken()) {
            head.append("Authorization: Bearer ").append(TestNode.TOKEN).append("\r\n");
        }
        if (body.length > 0) {
            head.append("Content-Type: application/json\r\nContent-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        try (Socket s = new Socket("127.0.0.1", node.node.adminPort())) {
            s.setSoTimeout((int) ANSWER_LIMIT.toMillis());
            // One write: the server has the whole request when it answers early (413) and closes, so it does not
            // reset the connection over unread bytes before the answer is read.
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.write(head.toString().getBytes(StandardCharsets.UTF_8));
            request.write(body);
            OutputStream out = s.getOutputStream();
            out.write(request.toByteArray());
            out.flush();
            return readAnswer(s.getInputStream(), r.method().equals("HEAD"));
        } catch (IOException e) {
            throw new AssertionError(r + " over a socket failed: " + e, e);
        }
    }

    private static Answer readAnswer(InputStream in, boolean head) throws IOException {
        ByteArrayOutputStream headBytes = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0 || headBytes.size() > MAX_RESPONSE_HEAD_BYTES) {
                throw new IOException("no complete answer head: " + headBytes.toString(StandardCharsets.ISO_8859_1));
            }
            headBytes.write(b);
            matched = b == "\r\n\r\n".charAt(matched) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        List<String> lines = headBytes.toString(StandardCharsets.ISO_8859_1).lines().toList();
        int status = Integer.parseInt(lines.getFirst().split(" ", 3)[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
            }
        }
        String contentType = headers.getOrDefault("content-type", "");
        if (head || status == 204 || status == 304) {
            return new Answer(status, contentType, "");
        }
        String length = headers.get("content-length");
        byte[] entity = length != null ? in.readNBytes(Integer.parseInt(length)) : in.readAllBytes();
        return new Answer(status, contentType, new String(entity, StandardCharsets.UTF_8));
    }
}
