package dev.selene.node.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.node.admin.StatusPageChromiumTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The real {@code selene serve} as a child process, started like the {@code ./selene} script starts it (java
 * -cp with the built classpath): it answers on a free loopback port and stops on SIGTERM within seconds with exit
 * code 0; an invalid setting, or a directory, address or port a setting names that cannot be used, stops it before
 * anything starts with one line naming the setting and exit code 2.
 */
class ServeProcessTest {

    private static final Pattern ADMIN = Pattern.compile("admin http://127\\.0\\.0\\.1:(\\d+)/");
    private static final String TOKEN = "serve-test-token";
    private static final Pattern RECORD_LINK = Pattern.compile(
            "<tr data-key=\"([^\"]+)\"[^>]*><td><a href=\"([^\"]+)\"");

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

    /**
     * Reads {@code in} line by line into {@code lines} on a thread of its own (a pooled one could wait behind the
     * readers of a process that runs on), completing at its end.
     */
    private static CompletableFuture<Void> collect(java.io.InputStream in, List<String> lines) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("child-output").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String l = r.readLine(); l != null; l = r.readLine()) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // the process ended
            }
            done.complete(null);
        });
        return done;
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
    void serve_answersOnItsPort_andStopsOnSigterm(@TempDir Path tmp) throws Exception {
        Path log = tmp.resolve("logs").resolve("selene.log");
        Process p = selene("serve", "--layout", "small", "--warm", "1m", "--host-budget", "64m", "--concurrency", "1",
                "--device", "simulated", "--admin-port", "0", "--admin-token", TOKEN, "--log-file", log.toString());
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
        String logged = Files.readString(log);
        assertTrue(logged.contains("selene node stopping its actors"),
                "exit " + p.exitValue() + ": " + String.join("\n", err) + "\nlog: " + logged + "\nstdout: " + out);
        assertFalse(err.stream().anyMatch(l -> l.contains("Exception")), String.join("\n", err));
        assertEquals(0, p.exitValue(), "a stop signal is a clean stop: " + String.join("\n", err));
        assertTrue(err.contains("selene serve: stopped"), String.join("\n", err));
        assertTrue(err.contains("selene serve: logging to " + log + "; warnings show here too"),
                String.join("\n", err));
        assertEquals(List.of(), err.stream().filter(l -> l.contains(" INFO ")).toList(),
                "the terminal shows the start and stop lines and warnings; the log file the rest");
        assertTrue(logged.contains("selene node up: "), logged);
    }

    @Test
    void malformedRequestHeaders_fromAClient_putNoMultiLineWarningsOnTheTerminalOrInTheLog(@TempDir Path tmp)
            throws Exception {
        // issue 26: 200 requests with malformed headers put 73 multi-line WARN entries on the node's terminal
        Path log = tmp.resolve("selene.log");
        Process p = selene("serve", "--layout", "small", "--warm", "1m", "--host-budget", "64m", "--concurrency", "1",
                "--device", "simulated", "--admin-port", "0", "--admin-token", TOKEN, "--log-file", log.toString());
        List<String> err = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> errDone = collect(p.getErrorStream(), err);
        collect(p.getInputStream(), new CopyOnWriteArrayList<>());
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> !p.isAlive() || err.stream().anyMatch(l -> ADMIN.matcher(l).find()));
        assertTrue(p.isAlive(), "serve exited early: " + err);
        int port = Integer.parseInt(err.stream().map(ADMIN::matcher).filter(Matcher::find).findFirst()
                .orElseThrow().group(1));
        List<String> malformed = List.of("If-Modified-Since: yesterday", "Authorization: Bearer",
                "Accept: text/html;q=high", "Content-Type: not a type", "Range: bytes=z-", "Cache-Control: max-age=-x");
        List<String> statusLines = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            String header = malformed.get(i % malformed.size());
            String path = i % 2 == 0 ? "/health" : "/records";
            try (Socket socket = new Socket("127.0.0.1", port)) {
                socket.setSoTimeout(10_000);
                socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + header
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                BufferedReader r = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                        StandardCharsets.US_ASCII));
                statusLines.add(header + " -> " + r.readLine());
            }
        }
        assertTrue(statusLines.stream().allMatch(l -> l.matches(".* -> HTTP/1\\.1 [24]\\d\\d .*")),
                "every request answered, none with a server error: " + statusLines);
        assertEquals(200, send("GET", "http://127.0.0.1:" + port + "/health", null).statusCode());
        assertTrue(p.toHandle().destroy());
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "serve did not stop within 10 s of SIGTERM: " + err);
        errDone.get(5, TimeUnit.SECONDS);
        String logged = Files.readString(log);
        assertEquals(List.of(), err.stream().filter(l -> l.contains("WARN") || l.startsWith(" ")
                || l.startsWith("\t")).toList(), "no warning on the terminal for a client's malformed headers");
        assertEquals(List.of(), logged.lines().filter(l -> l.contains("Illegal") || l.contains("WARN")).toList(),
                "nor in the log");
    }

    @Test
    void serveWithWorkloadBurst1_publishesIntoTheServedNode_itsRecordsAreFindable_andSigtermStillExits0(
            @TempDir Path tmp) throws Exception {
        Path log = tmp.resolve("selene.log");
        Process p = selene("serve", "--layout", "small", "--warm", "8m", "--host-budget", "64m", "--concurrency", "2",
                "--device", "simulated", "--admin-port", "0", "--log-file", log.toString(),
                "--workload", "burst:1", "--conversations", "6", "--tokens", "128", "--snapshot-ms", "30000");
        List<String> err = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> errDone = collect(p.getErrorStream(), err);
        collect(p.getInputStream(), new CopyOnWriteArrayList<>());
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
                .until(() -> !p.isAlive()
                        || err.contains("selene serve: workload done; the node serves until SIGTERM"));
        assertTrue(p.isAlive(), "serve exited early: " + String.join("\n", err));
        String done = err.stream().filter(l -> l.startsWith("selene serve: burst 1/1 done in ")).findFirst()
                .orElseThrow(() -> new AssertionError(String.join("\n", err)));
        assertTrue(done.contains("24 publications; verdict: OK: every publication kept"), done);
        Matcher m = err.stream().map(ADMIN::matcher).filter(Matcher::find).findFirst().orElseThrow();
        String base = "http://127.0.0.1:" + m.group(1);

        // the admin server stays up after the run: the burst's publications in its metrics, its records listed
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() ->
                send("GET", base + "/metrics", null).body().lines().anyMatch(l ->
                        l.startsWith("selene_publications_total{") && l.contains("result=\"stored\"")
                                && Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)) > 0));
        ObjectMapper json = new ObjectMapper();
        var page = json.readTree(send("GET", base + "/records?namespace=burst&limit=5", null).body());
        assertEquals(24, page.get("total").asInt(), page.toString());
        String hash = page.at("/records/0/hash").asText();
        HttpResponse<String> one = send("GET", base + "/records/burst/" + hash, null);
        assertEquals(200, one.statusCode(), one.body());
        assertEquals("burst/" + hash, json.readTree(one.body()).get("key").asText(), one.body());

        assertTrue(p.toHandle().destroy());
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "serve did not stop within 10 s of SIGTERM: " + err);
        errDone.get(5, TimeUnit.SECONDS);
        assertEquals(0, p.exitValue(), String.join("\n", err));
        assertTrue(err.contains("selene serve: stopped"), String.join("\n", err));
        assertFalse(err.stream().anyMatch(l -> l.contains("Exception")), String.join("\n", err));
    }

    @Test
    void serveWithWorkload_onAMemoryOnlyNode_runsAsManyConversationsAsItsWarmTierHolds_andEveryRunIsOk(
            @TempDir Path tmp) throws Exception {
        // issue 26: 128 conversations by default on a warm tier that held a third of them: every run NOT MET
        Process p = selene("serve", "--layout", "small", "--warm", "2m", "--host-budget", "64m", "--concurrency", "4",
                "--device", "simulated", "--admin-port", "0", "--log-file", tmp.resolve("selene.log").toString(),
                "--workload", "burst:2", "--tokens", "256", "--snapshot-ms", "30000");
        List<String> err = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> errDone = collect(p.getErrorStream(), err);
        collect(p.getInputStream(), new CopyOnWriteArrayList<>());
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
                .until(() -> !p.isAlive()
                        || err.contains("selene serve: workload done; the node serves until SIGTERM"));
        assertTrue(p.isAlive(), "serve exited early: " + String.join("\n", err));
        Matcher workload = Pattern.compile("selene serve: workload burst, 2 runs, (\\d+) conversations of 256 tokens")
                .matcher(String.join("\n", err));
        assertTrue(workload.find(), String.join("\n", err));
        int conversations = Integer.parseInt(workload.group(1));
        assertTrue(conversations >= 1 && conversations < 128, "sized to the 2 MiB warm tier: " + conversations);
        List<String> done = err.stream().filter(l -> l.startsWith("selene serve: burst ")).toList();
        assertEquals(2, done.size(), String.join("\n", err));
        for (String line : done) {
            assertTrue(line.contains("verdict: OK: every publication kept, " + conversations + "/" + conversations
                    + " conversations restored in full"), line);
        }
        assertTrue(p.toHandle().destroy());
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "serve did not stop within 10 s of SIGTERM: " + err);
        errDone.get(5, TimeUnit.SECONDS);
        assertEquals(0, p.exitValue(), String.join("\n", err));
    }

    /**
     * What an operator does with a node under load, end to end, as the README and the operations page say: serve a
     * node with a disk tier and a warm tier far smaller than the burst it drives into itself, open the status page in
     * Chromium listing the records on disk, follow one record's link to its chain and actor trace, and read there why
     * it was spilled (memory pressure) and that its file was committed; then find an abandoned publication through
     * {@code /traces} and read on the page why it was abandoned (its snapshot lease ended while it waited for slots, or
     * the caller gave up after being told to retry).
     */
    @Test
    void anOperatorServesUnderLoad_andReadsOnThePageWhyARecordWasSpilled_andWhyAPublicationWasAbandoned(
            @TempDir Path tmp) throws Exception {
        Optional<Path> chromium = StatusPageChromiumTest.chromium();
        assumeTrue(chromium.isPresent(), "no Chromium found (/usr/bin/chromium or $CHROMIUM); "
                + "install Debian's chromium package to run this test (.ci/run does)");
        Process p = selene("serve", "--layout", "small", "--warm", "2m", "--host-budget", "64m", "--concurrency", "8",
                "--device", "simulated", "--disk-dir", tmp.resolve("disk").toString(), "--create-disk-dir",
                "--disk-size", "256m", "--admin-port", "0", "--log-file", tmp.resolve("selene.log").toString(),
                "--workload", "burst:3", "--conversations", "64", "--tokens", "256", "--snapshot-ms", "1");
        List<String> err = new CopyOnWriteArrayList<>();
        collect(p.getErrorStream(), err);
        collect(p.getInputStream(), new CopyOnWriteArrayList<>());
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                .until(() -> !p.isAlive()
                        || err.contains("selene serve: workload done; the node serves until SIGTERM"));
        assertTrue(p.isAlive(), "serve exited early: " + String.join("\n", err));
        Matcher m = err.stream().map(ADMIN::matcher).filter(Matcher::find).findFirst().orElseThrow();
        String base = "http://127.0.0.1:" + m.group(1);

        // The page's list, filtered to the disk tier; the first record's link opens its chain and trace.
        String list = StatusPageChromiumTest.load(chromium.get(), tmp, base + "/?tier=disk&limit=5", null);
        Matcher row = RECORD_LINK.matcher(list);
        assertTrue(row.find(), "no record on disk in the page's list: " + String.join("\n", err));
        String spilled = StatusPageChromiumTest.load(chromium.get(), tmp,
                base + "/" + row.group(2).replace("&amp;", "&"), null);
        assertTrue(spilled.contains("<tr data-key=\"" + row.group(1) + "\" class=\"selected\""),
                "the record is marked in its chain");
        assertTrue(spilled.contains("Spill planned: memory pressure (free + clean slots are "),
                "the trace says why it was spilled: " + traceRows(spilled));
        assertTrue(spilled.contains("data-outcome=\"Spilled\""), "and that it was: " + traceRows(spilled));

        // An abandoned publication has no record, but its trace is kept: /traces finds it, the page shows why.
        // 64 conversations of 8 records each through a 2 MiB warm tier: 512 publications a burst, several times what
        // the warm tier holds, so that some wait for slots (at 16 conversations a loaded run once kept every one; at
        // 64 and one burst, a run whose disk kept up once did too: three bursts, each with new records, give it three
        // chances; at 4 publishers a run with the faster spill planning kept every one of three bursts, so 8 publish
        // at once: 255-510 of 1,536 abandoned on a quiet machine, more under load). Every trace is read, 16 hash
        // prefixes of at most 200 each, not the 200 newest.
        List<JsonNode> traces = new ArrayList<>();
        for (char digit : "0123456789abcdef".toCharArray()) {
            new ObjectMapper().readTree(send("GET", base + "/traces?namespace=burst&prefix=" + digit + "&limit=200",
                    null).body()).get("traces").forEach(traces::add);
        }
        // A publication is abandoned one of two ways, depending on timing: its lease ends while it waits in the
        // catalog's queue for slots, or the slots are short, Retry is answered, and the caller gives up. Either way
        // the page says which; the lease case is preferred when the run had one.
        String abandoned = null;
        String reason = null;
        for (JsonNode t : traces) {
            for (JsonNode e : t.get("events")) {
                if (e.get("outcome").asText("").startsWith("Abandoned(")
                        && (reason == null || e.get("message").asText().equals(LEASE_ENDED))) {
                    abandoned = t.get("key").asText();
                    reason = e.get("message").asText();
                }
            }
        }
        assertTrue(abandoned != null, "no abandoned publication among " + traces.size() + " traces: "
                + String.join("\n", err));
        assertTrue(reason.equals(LEASE_ENDED) || reason.equals(CALLER_GAVE_UP), reason);
        String hash = abandoned.substring(abandoned.indexOf('/') + 1);
        String why = StatusPageChromiumTest.load(chromium.get(), tmp, base + "/?ns=burst&key=" + hash + "#record",
                null);
        assertTrue(why.contains(reason), "the trace says why it was abandoned (" + reason + "): " + traceRows(why));
        assertTrue(why.contains("data-outcome=\"Abandoned(no_space)\""), traceRows(why));

        assertTrue(p.toHandle().destroy());
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "serve did not stop within 10 s of SIGTERM: " + err);
        assertEquals(0, p.exitValue(), String.join("\n", err));
    }

    private static final String LEASE_ENDED = "Abandoned: the snapshot lease ended while waiting for slots";
    private static final String CALLER_GAVE_UP = "Abandoned by the caller while told to retry";

    /** The rows of the page's actor-trace table, for a failure message. */
    private static String traceRows(String dom) {
        int start = dom.indexOf("<table id=\"trace\">");
        return start < 0 ? "(no trace table)" : dom.substring(start, Math.min(dom.length(), start + 4000));
    }

    @Test
    void anInvalidSetting_stopsTheNodeAtStart_withOneLineAndExitCode2() throws Exception {
        assertEquals("selene: selene.prefix-cache.max-age = 'abc' is invalid; allowed: a duration such as 30m, 2h "
                + "or 7d, or off (--prefix-cache-max-age)", failsAtStart("serve", "--prefix-cache-max-age", "abc",
                "--admin-port", "0"));
    }

    @Test
    void aDiskDirectoryAlone_isRefusedNamingTheFlagThatSizesIt() throws Exception {
        // issue 26: serve --disk-dir X alone failed on selene.disk.size = 0 without naming --disk-size
        String line = failsAtStart("serve", "--layout", "small", "--disk-dir", "/tmp", "--admin-port", "0");
        assertTrue(line.startsWith("selene: selene.disk.size = '0' is invalid; allowed: at least one record"), line);
        assertTrue(line.endsWith(" (--disk-size)"), line);
    }

    @Test
    void aDiskDirectoryThatIsAFile_isOneLineAndExitCode2_beforeAnythingStarts(@TempDir Path tmp) throws Exception {
        Path file = Files.writeString(tmp.resolve("afile"), "x");
        assertEquals("selene: selene.disk.dir = '" + file + "' is invalid: not a directory; allowed: a writable "
                + "directory", failsAtStart(small("--disk-dir", file.toString(), "--disk-size", "64m")));
    }

    @Test
    void aMissingDiskDirectory_isRefused_andNotCreated(@TempDir Path tmp) throws Exception {
        Path missing = tmp.resolve("missing");
        assertEquals("selene: selene.disk.dir = '" + missing + "' is invalid: no such directory; allowed: an "
                + "existing writable directory, or selene.disk.create = true (--create-disk-dir) to create it",
                failsAtStart(small("--disk-dir", missing.toString(), "--disk-size", "64m")));
        assertFalse(Files.exists(missing), "not created");
    }

    @Test
    void aDiskDirectoryThatCannotBeWritten_isOneLineAndExitCode2(@TempDir Path tmp) throws Exception {
        Path file = Files.writeString(tmp.resolve("afile"), "x");
        Path underFile = file.resolve("records");
        assertEquals("selene: selene.disk.dir = '" + underFile + "' is invalid: cannot create it (Not a "
                + "directory); allowed: a writable directory", failsAtStart(small("--disk-dir", underFile.toString(),
                "--disk-size", "64m", "--create-disk-dir")));
        // read-only for root too: procfs takes no new file
        String proc = failsAtStart(small("--disk-dir", "/proc/1", "--disk-size", "64m"));
        assertTrue(proc.startsWith("selene: selene.disk.dir = '/proc/1' is invalid: "), proc);
        assertTrue(proc.endsWith("; allowed: a writable directory"), proc);
    }

    @Test
    void aPlainValueForTheWholeSeleneSection_isOneLineNamingIt(@TempDir Path tmp) throws Exception {
        Path conf = Files.writeString(tmp.resolve("bad.conf"), "selene = \"x\"\n");
        assertEquals("selene: selene = 'x' is invalid; allowed: an object of settings, e.g. selene { warm = 8g }",
                failsAtStart(small("--config", conf.toString())));
    }

    @Test
    void anAdminAddressThatDoesNotResolve_orAPortInUse_isOneLineNamingTheSetting() throws Exception {
        assertEquals("selene: selene.admin.bind = 'no.such.host.invalid' is invalid: no such host; allowed: an IP "
                + "address or host name of this machine, e.g. 127.0.0.1",
                failsAtStart(small("--admin-bind", "no.such.host.invalid")));
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            assertEquals("selene: selene.admin.port = '" + port + "' is invalid: it cannot be bound on 127.0.0.1 "
                    + "(Address already in use); allowed: a free port, or 0 for any free port",
                    failsAtStart(node(Integer.toString(port))));
        }
    }

    @Test
    void aCreatedDiskDirectory_usedByARunningNode_refusesASecondNode_andSigintStopsTheFirstWithExit0(
            @TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("records");
        Process first = selene(small("--disk-dir", dir.toString(), "--disk-size", "64m", "--create-disk-dir",
                "--log-file", tmp.resolve("selene.log").toString()));
        List<String> err = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> errDone = collect(first.getErrorStream(), err);
        collect(first.getInputStream(), new CopyOnWriteArrayList<>());
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> !first.isAlive() || err.stream().anyMatch(l -> ADMIN.matcher(l).find()));
        assertTrue(first.isAlive(), "serve exited early: " + err);
        assertTrue(err.stream().anyMatch(l -> l.startsWith("selene serve: memory+disk node")), String.join("\n", err));
        assertTrue(Files.isDirectory(dir), "created with --create-disk-dir");

        assertEquals("selene: selene.disk.dir = '" + dir + "' is invalid: already used by another Selene node (pid "
                + first.pid() + "); allowed: a directory no running node uses",
                failsAtStart(small("--disk-dir", dir.toString(), "--disk-size", "64m")));

        // SIGINT (Ctrl-C) stops it as SIGTERM does; a JVM started with SIGINT ignored (a background job of a
        // script, as the build may be) keeps it ignored, so then SIGTERM stands in
        String signal = sigintIgnored(first) ? "-TERM" : "-INT";
        assertEquals(0, new ProcessBuilder("kill", signal, Long.toString(first.pid())).start().waitFor());
        assertTrue(first.waitFor(15, TimeUnit.SECONDS), "serve did not stop within 15 s of " + signal + ": " + err);
        errDone.get(5, TimeUnit.SECONDS);
        assertEquals(0, first.exitValue(), String.join("\n", err));
        assertTrue(err.contains("selene serve: stopped"), String.join("\n", err));
    }

    /** Whether {@code p} ignores SIGINT (bit 1 of the SigIgn mask in its /proc status). */
    private static boolean sigintIgnored(Process p) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status"))) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(line.substring(7).strip(), 16) & 0x2) != 0;
            }
        }
        return true;
    }

    /** {@code serve} of a small node on the simulated device, admin server on any free port, then {@code more}. */
    private static String[] small(String... more) {
        return node("0", more);
    }

    /** {@code serve} of a small node on the simulated device with its admin server on {@code adminPort}. */
    private static String[] node(String adminPort, String... more) {
        List<String> args = new ArrayList<>(List.of("serve", "--layout", "small", "--warm", "8m", "--host-budget",
                "64m", "--concurrency", "1", "--device", "simulated", "--admin-port", adminPort));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    /**
     * Runs {@code selene args} to its end, which must come within 30 s with exit code 2, nothing on standard output
     * and one line on standard error (no log line before it: nothing started); returns that line.
     */
    private String failsAtStart(String... args) throws Exception {
        Process p = selene(args);
        List<String> err = new CopyOnWriteArrayList<>();
        List<String> out = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> e = collect(p.getErrorStream(), err);
        CompletableFuture<Void> o = collect(p.getInputStream(), out);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "still running after 30 s: " + err);
        e.get(5, TimeUnit.SECONDS);
        o.get(5, TimeUnit.SECONDS);
        assertEquals(2, p.exitValue(), String.join("\n", err));
        assertEquals(1, err.size(), "one line: " + String.join("\n", err));
        assertTrue(err.getFirst().startsWith("selene: selene"), err.getFirst());
        assertEquals(List.of(), out);
        return err.getFirst();
    }
}
