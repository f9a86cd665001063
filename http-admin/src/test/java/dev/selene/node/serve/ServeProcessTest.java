package dev.selene.node.serve;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
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
 * The real {@code selene serve} as a child process, started like the {@code ./selene} script starts it (java
 * -cp with the built classpath): it answers on a free loopback port and stops on SIGTERM within seconds; an
 * invalid setting stops it at start with one line and exit code 2.
 */
class ServeProcessTest {

    private static final Pattern ADMIN = Pattern.compile("admin http://127\\.0\\.0\\.1:(\\d+)/");
    private static final String TOKEN = "serve-test-token";

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
    static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

    private Process selene(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx512m",
                "-Dlogback.configurationFile=logback.xml",
                "-cp", classpath(), "dev.selene.node.cli.SeleneMain"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(new File("."));
        pb.environment().put("SELENE_LOG_LEVEL", "INFO");
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    private static CompletableFuture<Void> collect(java.io.InputStream in, List<String> lines) {
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

    private HttpResponse<String> send(String method, String url, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void serve_answersOnItsPort_andStopsOnSigterm() throws Exception {
        Process p = selene("serve", "--layout", "small", "--warm", "1m", "--host-budget", "64m", "--concurrency", "1",
                "--device", "simulated", "--admin-port", "0", "--admin-token", TOKEN);
        List<String> err = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> errDone = collect(p.getErrorStream(), err);
        List<String> out = new CopyOnWriteArrayList<>();
        collect(p.getInputStream(), out);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> !p.isAlive() || err.stream().anyMatch(l -> ADMIN.matcher(l).find()));
        assertTrue(p.isAlive(), "serve exited early: " + err);
        Matcher m = err.stream().map(ADMIN::matcher).filter(Matcher::find).findFirst().orElseThrow();
        String base = "http://127.0.0.1:" + m.group(1);

        assertEquals(200, send("GET", base + "/health", null).statusCode());
        var status = new ObjectMapper().readTree(send("GET", base + "/status", null).body());
        assertEquals("memory-only", status.at("/node/shape").asText());
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() -> {
            List<String> metrics = send("GET", base + "/metrics", null).body().lines().toList();
            return metrics.stream().anyMatch(l -> l.startsWith("selene_slots_capacity{"))
                    && metrics.stream().anyMatch(l -> l.startsWith("selene_slots_in_use{"))
                    && metrics.stream().anyMatch(l -> l.startsWith("selene_expired_total{")
                            && l.contains("tier=\"memory\""))
                    && metrics.stream().anyMatch(l -> l.startsWith("selene_retry_abandoned_total{")
                            && l.contains("reason=\"no_space\""));
        });
        HttpResponse<String> wrong = send("POST", base + "/drain", "not-the-token");
        assertEquals(403, wrong.statusCode());
        assertTrue(wrong.body().startsWith("{"), wrong.body());
        assertEquals(401, send("POST", base + "/drain", null).statusCode());

        long start = System.nanoTime();
        // SIGTERM; Process.destroy() would also close our end of its output, hiding its shutdown log
        assertTrue(p.toHandle().destroy());
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "serve did not stop within 10 s of SIGTERM: " + err);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(millis < 8_000, "stopped in " + millis + " ms");
        errDone.get(5, TimeUnit.SECONDS);
        assertTrue(err.stream().anyMatch(l -> l.contains("selene node stopping its actors")),
                "exit " + p.exitValue() + ": " + String.join("\n", err) + "\nstdout: " + out);
        assertFalse(err.stream().anyMatch(l -> l.contains("Exception")), String.join("\n", err));
    }

    @Test
    void anInvalidSetting_stopsTheNodeAtStart_withOneLineAndExitCode2() throws Exception {
        Process p = selene("serve", "--prefix-cache-max-age", "abc", "--admin-port", "0");
        List<String> err = new CopyOnWriteArrayList<>();
        List<String> out = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> e = collect(p.getErrorStream(), err);
        CompletableFuture<Void> o = collect(p.getInputStream(), out);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        e.get(5, TimeUnit.SECONDS);
        o.get(5, TimeUnit.SECONDS);
        assertEquals(2, p.exitValue());
        assertEquals(List.of("selene: selene.prefix-cache.max-age = 'abc' is invalid; allowed: a duration such as "
                + "30m, 2h or 7d, or off"), err);
        assertEquals(List.of(), out);
    }
}
