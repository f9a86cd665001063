package dev.selene.node.manager;

import com.typesafe.config.Config;
import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.pool.KeyedChains;
import dev.selene.actors.pool.PoolCluster;
import dev.selene.actors.pool.PoolSecurity;
import dev.selene.actors.value.PublishResult;
import dev.selene.engine.key.RecordSpec;
import dev.selene.transport.gpu.SimulatedDevice;
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
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.selene.node.manager.SeleneProcess.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real {@code selene manager} processes with mutual TLS on both of the pool's planes, on loopback: a manager with the
 * pool's certificate joins; one whose certificate another authority signed never becomes a member, and the manager it
 * tried is seen refusing it (counted in its metrics, logged once however often it tries); a client that speaks plain
 * text to the cluster port or to the data port gets not one byte back.
 */
class PoolTlsProcessTest {

    private static final Duration START = Duration.ofSeconds(90);
    /**
     * How long the stranger is given to start and try to get in: its JVM's start and several join attempts (one
     * every few seconds), on two cores that other tests' processes may share.
     */
    private static final Duration STRANGER = Duration.ofSeconds(60);

    /** The managers' namespace rules: managers copy any namespace; host-a and host-c tenant-a, host-b tenant-b. */
    private static final String ACCESS = "selene.manager.access {\n  \"pool-manager-*\" = [\"*\"]\n"
            + "  \"host-a\" = [\"tenant-a\"]\n  \"host-b\" = [\"tenant-b\"]\n  \"host-c\" = [\"tenant-a\"]\n}\n";
    private static final Pattern ACCESS_REFUSED = Pattern.compile(
            "selene_pool_access_refused_total\\{[^}]*operation=\"(read|write)\"[^}]*} (\\d+)");
    private static final int CHAIN = 4;

    private final List<SeleneProcess> processes = new ArrayList<>();
    private final List<SeleneCache> hosts = new ArrayList<>();
    private final SimulatedDevice device = SimulatedDevice.create();

    @AfterEach
    void stop() {
        for (SeleneCache h : hosts) {
            try {
                h.close();
            } catch (RuntimeException e) {
                System.out.println("a host was slow to stop: " + e.getMessage());
            }
        }
        processes.forEach(SeleneProcess::close);
        device.close();
    }

    /** A host in this JVM with {@code node}'s certificate files, joining the pool at {@code seed}. */
    private SeleneCache host(String node, int seed) {
        Config pekko = new PoolSecurity(TestCertificates.of(node), PoolTls.Engine.JDK, PoolSecurity.PlainText.OFF,
                Map.of()).settings().withFallback(CacheSettings.standaloneSystemConfig());
        SeleneCache h = SeleneCache.start(KeyedChains.hostConfig(List.of("127.0.0.1:" + seed)), device, pekko,
                PoolCluster.SYSTEM_NAME);
        hosts.add(h);
        return h;
    }

    /** The settings that give a node {@code node}'s certificate files. */
    private static String tlsSettings(String node) {
        PoolTls.Files f = TestCertificates.of(node);
        return "selene.pool.tls {\n  certificate = \"" + f.certificate() + "\"\n  private-key = \"" + f.privateKey()
                + "\"\n  ca = \"" + f.ca() + "\"\n}\n";
    }

    /** A manager with {@code node}'s certificate files, its data plane on {@code dataPort}. */
    private SeleneProcess manager(Path dir, String node, int port, int seed, int dataPort) throws IOException {
        Path conf = dir.resolve(node + ".conf");
        Files.writeString(conf, tlsSettings(node) + "selene.manager.data-port = " + dataPort + "\n" + ACCESS);
        SeleneProcess p = SeleneProcess.start(dir, node, "manager", "--config", conf.toString(), "--layout", "small",
                "--bind", "127.0.0.1", "--port", Integer.toString(port), "--seeds", "127.0.0.1:" + seed,
                "--store-size", "64m", "--replicas", "2", "--max-age", "off", "--admin-port", "0");
        processes.add(p);
        return p;
    }

    @Test
    void aManagerWithThePoolsCertificateJoins_aStrangerIsRefusedCountedAndLoggedOnce_plainTextGetsNothing_andAHostOfAnotherNamespaceCannotReadOrWriteItsRecords_andAHostWithAnExpiredCertificateGivesUp(
            @TempDir Path tmp) throws Exception {
        List<Integer> ports = LoopbackPorts.reserve(8);
        SeleneProcess first = manager(tmp, "pool-manager-1", ports.get(0), ports.get(0), ports.get(1))
                .awaitReady(START);
        SeleneProcess second = manager(tmp, "pool-manager-2", ports.get(2), ports.get(0), ports.get(3))
                .awaitReady(START);
        awaitTrue(START, "the second manager a member", () -> first.members() == 2);

        SeleneProcess stranger = manager(tmp, "rogue", ports.get(4), ports.get(0), ports.get(5));
        awaitTrue(STRANGER, "the first manager refusing the stranger twice or more",
                () -> tlsRefused(first, "cluster", "untrusted") >= 2);
        assertEquals(2, first.members(), "the stranger is no member: " + first.status());
        assertTrue(stranger.process().isAlive(), "the stranger keeps trying (it is refused, not crashed): " + stranger.tail(20));
        long logged = first.lines().stream().filter(l -> l.contains("refused a cluster connection")
                && l.contains(PoolTls.Reason.UNTRUSTED.words())).count();
        assertEquals(1, logged, "refusals of one peer for one reason are logged once: " + first.tail(40));

        for (int port : List.of(ports.get(0), ports.get(1))) {
            assertPlainTextGetsNothing(port);
        }
        assertEquals(2, second.members(), "the pool's members still see each other");

        // A served host whose certificate expired tries to join (it runs beside the checks below): refused and counted
        // by the manager, and the host gives up starting with one line and the environment's exit code.
        long expiredBefore = tlsRefused(first, "cluster", "expired");
        Path expiredConf = tmp.resolve("host-expired.conf");
        Files.writeString(expiredConf, tlsSettings("expired") + "selene.pool.port = " + ports.get(7) + "\n"
                + "selene.pool.join-timeout = 8s\n");
        SeleneProcess expired = SeleneProcess.start(tmp, "host-expired", "serve", "--config", expiredConf.toString(),
                "--layout", "small", "--warm", "8m", "--device", "simulated", "--pool-managers",
                "127.0.0.1:" + ports.get(0), "--admin-port", "0");
        processes.add(expired);

        // Namespaces: host-a retires a chain of tenant-a to the managers.
        SeleneCache a = host("host-a", ports.get(0));
        List<RecordSpec> specs = KeyedChains.chain("tenant-a", 7_000, 0, CHAIN);
        for (RecordSpec spec : specs) {
            assertInstanceOf(PublishResult.Stored.class, KeyedChains.publish(a, device, spec).result());
        }
        assertEquals(0, a.drain(Duration.ofSeconds(30)).toCompletableFuture().get(60, TimeUnit.SECONDS).skipped(),
                "host-a retired its chain over TLS");
        for (RecordSpec spec : specs) {
            assertTrue(KeyedChains.retired(a, spec.key()), spec.key() + " retired to the pool");
        }
        // host-b, of tenant-b, asks for it: the managers refuse to send it, and count the refusal.
        long readsRefused = accessRefused(first, "read") + accessRefused(second, "read");
        SeleneCache b = host("host-b", ports.get(0));
        KeyedChains.Restore denied = KeyedChains.restore(b, device, specs);
        assertEquals(0, denied.result().fromPool(), "nothing of tenant-a came from the pool to host-b: " + denied
                + KeyedChains.traces(b, specs));
        assertEquals(0, denied.verified(), "no record of tenant-a landed at host-b: " + denied);
        awaitTrue(Duration.ofSeconds(10), "the managers counting host-b's refused read",
                () -> accessRefused(first, "read") + accessRefused(second, "read") > readsRefused);
        // Nor can it write into tenant-a: its retirement is refused and counted.
        long writesRefused = accessRefused(first, "write") + accessRefused(second, "write");
        RecordSpec intruder = KeyedChains.chain("tenant-a", 9_000, 0, 1).getFirst();
        assertInstanceOf(PublishResult.Stored.class, KeyedChains.publish(b, device, intruder).result());
        b.drain(Duration.ofSeconds(30)).toCompletableFuture().get(60, TimeUnit.SECONDS);
        awaitTrue(Duration.ofSeconds(10), "the managers counting host-b's refused write",
                () -> accessRefused(first, "write") + accessRefused(second, "write") > writesRefused);
        assertFalse(KeyedChains.retired(b, intruder.key()), "host-b's tenant-a record is not in the pool");
        // host-c, allowed tenant-a, restores the chain whole from the pool, byte-identically.
        SeleneCache c = host("host-c", ports.get(0));
        KeyedChains.Restore allowed = KeyedChains.restore(c, device, specs);
        assertTrue(allowed.wholeFromPool(CHAIN), "host-c restored tenant-a's chain from the pool: " + allowed
                + KeyedChains.traces(c, specs));

        assertEquals(2, expired.awaitExit(Duration.ofSeconds(60)), "the expired host gives up: " + expired.tail(20));
        assertTrue(expired.lines().stream().anyMatch(l -> l.startsWith("selene: no pool manager reachable at")),
                "one line says why: " + expired.tail(20));
        assertTrue(tlsRefused(first, "cluster", "expired") > expiredBefore, "the manager counted the expired host");
        assertEquals(1, first.lines().stream().filter(l -> l.contains("refused a cluster connection")
                && l.contains(PoolTls.Reason.EXPIRED.words())).count(), "logged once: " + first.tail(40));
        assertFalse(first.status().at("/cluster/members").toString().contains("127.0.0.1:" + ports.get(7)),
                "the expired host never became a member: " + first.status());

        // A served host refuses plain text on its own cluster port too: nothing comes back, and it counts and logs it.
        Path conf = tmp.resolve("host-d.conf");
        Files.writeString(conf, tlsSettings("host-c") + "selene.pool.port = " + ports.get(6) + "\n");
        SeleneProcess served = SeleneProcess.start(tmp, "host-d", "serve", "--config", conf.toString(), "--layout",
                "small", "--warm", "8m", "--device", "simulated", "--pool-managers", "127.0.0.1:" + ports.get(0),
                "--admin-port", "0", "--log-file", tmp.resolve("host-d-node.log").toString());
        processes.add(served);
        served.awaitReady(START); // its cluster port is bound once its actor system runs
        assertPlainTextGetsNothing(ports.get(6));
        awaitTrue(Duration.ofSeconds(10), "the served host counting the plain-text connection it refused",
                () -> tlsRefused(served, "cluster", "not_tls") >= 1);
        assertEquals(1, served.lines().stream().filter(l -> l.contains("refused a cluster connection")
                && l.contains(PoolTls.Reason.NOT_TLS.words())).count(), "logged once: " + served.tail(20));
    }

    /** The TLS refusals on {@code plane} for {@code reason} in {@code node}'s metrics. */
    private static long tlsRefused(SeleneProcess node, String plane, String reason) throws Exception {
        Matcher m = Pattern.compile("selene_pool_tls_refused_total\\{[^}]*plane=\"" + plane + "\"[^}]*reason=\""
                + reason + "\"[^}]*} (\\d+)").matcher(node.get("/metrics").body());
        long n = 0;
        while (m.find()) {
            n += Long.parseLong(m.group(1));
        }
        return n;
    }

    /** Reads or writes ({@code operation}) {@code manager} refused by its namespace rules, from its metrics. */
    private static long accessRefused(SeleneProcess manager, String operation) throws Exception {
        Matcher m = ACCESS_REFUSED.matcher(manager.get("/metrics").body());
        long n = 0;
        while (m.find()) {
            if (m.group(1).equals(operation)) {
                n += Long.parseLong(m.group(2));
            }
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
