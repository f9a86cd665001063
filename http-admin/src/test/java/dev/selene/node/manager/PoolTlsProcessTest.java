package dev.selene.node.manager;

import dev.selene.transport.pool.LoopbackPorts;
import dev.selene.transport.tls.PoolTls;
import dev.selene.transport.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.selene.node.manager.SeleneProcess.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real {@code selene manager} processes with mutual TLS on both of the pool's planes, on loopback: a manager with the
 * pool's certificate joins; one whose certificate another authority signed never becomes a member, and the manager it
 * tried is seen refusing it (counted in its metrics, logged once however often it tries); a client that speaks plain
 * text to the cluster port or to the data port gets not one byte back.
 */
class PoolTlsProcessTest {

    private static final Duration START = Duration.ofSeconds(90);
    /** How long the stranger is given to get in: several join attempts (one every few seconds). */
    private static final Duration STRANGER = Duration.ofSeconds(15);
    private static final Pattern REFUSED_UNTRUSTED = Pattern.compile(
            "selene_pool_tls_refused_total\\{[^}]*plane=\"cluster\"[^}]*reason=\"untrusted\"[^}]*} (\\d+)");

    private final List<SeleneProcess> processes = new ArrayList<>();

    @AfterEach
    void stop() {
        processes.forEach(SeleneProcess::close);
    }

    /** A manager with {@code node}'s certificate files, its data plane on {@code dataPort}. */
    private SeleneProcess manager(Path dir, String node, int port, int seed, int dataPort) throws IOException {
        PoolTls.Files f = TestCertificates.of(node);
        Path conf = dir.resolve(node + ".conf");
        Files.writeString(conf, "selene.pool.tls {\n  certificate = \"" + f.certificate() + "\"\n  private-key = \""
                + f.privateKey() + "\"\n  ca = \"" + f.ca() + "\"\n}\nselene.manager.data-port = " + dataPort + "\n");
        SeleneProcess p = SeleneProcess.start(dir, node, "manager", "--config", conf.toString(), "--layout", "small",
                "--bind", "127.0.0.1", "--port", Integer.toString(port), "--seeds", "127.0.0.1:" + seed,
                "--store-size", "64m", "--replicas", "2", "--max-age", "off", "--admin-port", "0");
        processes.add(p);
        return p;
    }

    @Test
    void aManagerWithThePoolsCertificateJoins_aStrangerIsRefusedCountedAndLoggedOnce_plainTextGetsNothing(
            @TempDir Path tmp) throws Exception {
        List<Integer> ports = LoopbackPorts.reserve(6);
        SeleneProcess first = manager(tmp, "pool-manager-1", ports.get(0), ports.get(0), ports.get(1))
                .awaitReady(START);
        SeleneProcess second = manager(tmp, "pool-manager-2", ports.get(2), ports.get(0), ports.get(3))
                .awaitReady(START);
        awaitTrue(START, "the second manager a member", () -> first.members() == 2);

        SeleneProcess stranger = manager(tmp, "rogue", ports.get(4), ports.get(0), ports.get(5));
        awaitTrue(STRANGER, "the first manager refusing the stranger twice or more",
                () -> refusedUntrusted(first) >= 2);
        assertEquals(2, first.members(), "the stranger is no member: " + first.status());
        assertTrue(stranger.process().isAlive(), "the stranger keeps trying (it is refused, not crashed): " + stranger.tail(20));
        long logged = first.lines().stream().filter(l -> l.contains("refused a cluster connection")
                && l.contains(PoolTls.Reason.UNTRUSTED.words())).count();
        assertEquals(1, logged, "refusals of one peer for one reason are logged once: " + first.tail(40));

        for (int port : List.of(ports.get(0), ports.get(1))) {
            assertPlainTextGetsNothing(port);
        }
        assertEquals(2, second.members(), "the pool's members still see each other");
    }

    /** The refusals of untrusted certificates on the cluster plane in {@code manager}'s metrics. */
    private static long refusedUntrusted(SeleneProcess manager) throws Exception {
        Matcher m = REFUSED_UNTRUSTED.matcher(manager.get("/metrics").body());
        long n = 0;
        while (m.find()) {
            n += Long.parseLong(m.group(1));
        }
        return n;
    }

    /** A plain-text request to a TLS port: the answer is the end of the stream (or nothing at all), never data. */
    private static void assertPlainTextGetsNothing(int port) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5_000);
            OutputStream out = s.getOutputStream();
            try {
                out.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n\0\0\0\0selene plain text".getBytes());
                out.flush();
            } catch (IOException e) {
                return; // refused before the request was written: nothing crossed
            }
            InputStream in = s.getInputStream();
            byte[] buffer = new byte[4096];
            int total = 0;
            try {
                for (int n; (n = in.read(buffer)) > 0; ) {
                    total += n;
                }
            } catch (SocketTimeoutException e) {
                // silence is nothing too
            } catch (IOException e) {
                // reset: nothing
            }
            // A TLS server may answer a malformed hello with one TLS alert record (7 bytes), never with data.
            assertTrue(total <= 7, "plain text to port " + port + " got " + total + " bytes back");
        }
    }
}
