package dev.selene.node.manager;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.node.config.MachineMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real {@code selene manager} as a child process, started like the {@code ./selene} script starts it: it
 * prints its admin address in one line, becomes ready, and on SIGTERM leaves the cluster and exits 0; a bad flag
 * or setting stops it at start with one line and exit code 2.
 */
class ManagerProcessTest {

    private static final Pattern ADMIN = Pattern.compile("admin http://127\\.0\\.0\\.1:(\\d+)/");

    private final List<Process> processes = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void killLeftovers() {
        for (Process p : processes) {
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }
        http.close();
    }

    /** The test JVM's classpath (surefire's real one when it runs from a manifest-only jar). */
    private static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

    private Process selene(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx512m",
                "-Dlogback.configurationFile=logback.xml", "-cp", classpath(), "dev.selene.node.cli.SeleneMain"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(new File("."));
        pb.environment().put("SELENE_LOG_LEVEL", "INFO");
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    private static CompletableFuture<Void> collect(InputStream in, List<String> lines) {
        return CompletableFuture.runAsync(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String l = r.readLine(); l != null; l = r.readLine()) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // the process ended
            }
        });
    }

    private HttpResponse<String> get(String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void manager_becomesReady_servesItsStatus_andOnSigtermLeavesTheClusterAndExits0() throws Exception {
        Process p = selene("manager", "--layout", "small", "--store-size", "16m", "--port", "0", "--admin-port", "0");
        List<String> err = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> errDone = collect(p.getErrorStream(), err);
        List<String> out = new CopyOnWriteArrayList<>();
        collect(p.getInputStream(), out);
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
                .until(() -> !p.isAlive() || err.stream().anyMatch(l -> ADMIN.matcher(l).find()));
        assertTrue(p.isAlive(), "manager exited early: " + err);
        Matcher m = err.stream().map(ADMIN::matcher).filter(Matcher::find).findFirst().orElseThrow();
        String base = "http://127.0.0.1:" + m.group(1);

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> get(base + "/ready").statusCode() == 200);
        var status = new ObjectMapper().readTree(get(base + "/status").body());
        assertEquals("Up", status.at("/cluster/selfStatus").asText());
        assertEquals(16L << 20, status.at("/store/capacityBytes").asLong());
        // Kamon snapshots once a second: a scrape right after start may not have the gauge yet.
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200))
                .until(() -> get(base + "/metrics").body().contains("selene_pool_capacity_bytes{"));

        long start = System.nanoTime();
        assertTrue(p.toHandle().destroy()); // SIGTERM
        assertTrue(p.waitFor(20, TimeUnit.SECONDS), "manager did not stop within 20 s of SIGTERM: " + err);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        errDone.get(5, TimeUnit.SECONDS);
        assertEquals(0, p.exitValue(), String.join("\n", err));
        assertTrue(millis < 15_000, "stopped in " + millis + " ms");
        assertTrue(err.stream().anyMatch(l -> l.contains("selene manager stopping: leaving the cluster")),
                String.join("\n", err));
        assertTrue(err.stream().anyMatch(l -> l.contains("cluster status Removed")), String.join("\n", err));
        assertEquals("selene manager: stopped", err.getLast());
        assertFalse(err.stream().anyMatch(l -> l.contains("Exception")), String.join("\n", err));
    }

    @Test
    void aManagerWhoseSeedsDoNotAnswer_saysSoOnceAfterTheJoinTimeout_staysNotReady_andStillStopsOnSigterm()
            throws Exception {
        int nobody;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            nobody = s.getLocalPort(); // free again once closed: no cluster answers there
        }
        Path conf = java.nio.file.Files.createTempFile("manager-join", ".conf");
        java.nio.file.Files.writeString(conf, "selene.pool.join-timeout = 2s\n"); // the manager's own settings file
        conf.toFile().deleteOnExit();
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx512m",
                "-Dlogback.configurationFile=logback.xml", "-cp", classpath(), "dev.selene.node.cli.SeleneMain",
                "manager", "--config", conf.toString(), "--layout", "small", "--store-size", "16m", "--port", "0",
                "--admin-port", "0", "--seeds", "127.0.0.1:" + nobody));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(new File("."));
        pb.environment().put("SELENE_LOG_LEVEL", "INFO");
        Process p = pb.start();
        processes.add(p);
        List<String> err = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> errDone = collect(p.getErrorStream(), err);
        collect(p.getInputStream(), new CopyOnWriteArrayList<>());
        String said = "selene manager: not a member of the pool's cluster after 2 s: none of the seeds (127.0.0.1:"
                + nobody + ") let it join; it keeps trying, and /ready answers 503 until it joins";
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
                .until(() -> !p.isAlive() || err.stream().anyMatch(l -> l.startsWith(said)));
        assertTrue(p.isAlive(), "it keeps trying rather than exiting: " + err);
        Matcher m = err.stream().map(ADMIN::matcher).filter(Matcher::find).findFirst().orElseThrow();
        HttpResponse<String> ready = get("http://127.0.0.1:" + m.group(1) + "/ready");
        assertEquals(503, ready.statusCode());
        assertTrue(ready.body().contains("not joined yet: none of its seeds has let it in"), ready.body());
        assertTrue(p.toHandle().destroy()); // SIGTERM
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "manager did not stop within 30 s of SIGTERM: " + err);
        errDone.get(5, TimeUnit.SECONDS);
        assertEquals(1, err.stream().filter(l -> l.startsWith(said)).count(), "said once: " + err);
    }

    @Test
    void aBadFlag_orAStoreOrPortThisMachineCannotGive_stopsTheManagerAtStart_withOneLineAndExitCode2()
            throws Exception {
        long memory = MachineMemory.totalBytes();
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            List<List<String>> cases = new ArrayList<>(List.of(List.of("manager", "--replicas", "4"),
                    List.of("manager", "--seeds", "pekko://other@host:1"),
                    List.of("manager", "--store-size", "16m", "--port", "0",
                            "--admin-port", Integer.toString(taken.getLocalPort()))));
            if (memory > 0) {
                cases.add(List.of("manager", "--store-size", Long.toString(memory), "--port", "0",
                        "--admin-port", "0"));
            }
            for (List<String> args : cases) {
                assertOneLineAndExitCode2(args);
            }
        }
    }

    private void assertOneLineAndExitCode2(List<String> args) throws Exception {
        Process p = selene(args.toArray(String[]::new));
        List<String> err = new CopyOnWriteArrayList<>();
        List<String> out = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> e = collect(p.getErrorStream(), err);
        CompletableFuture<Void> o = collect(p.getInputStream(), out);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), args.toString());
        e.get(5, TimeUnit.SECONDS);
        o.get(5, TimeUnit.SECONDS);
        assertEquals(2, p.exitValue(), args + ": " + String.join("\n", err));
        assertEquals(1, err.size(), args + ": " + String.join("\n", err));
        assertTrue(err.getFirst().startsWith("selene: selene.manager."), err.getFirst());
        assertEquals(List.of(), out);
    }
}
