package dev.selene.node.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code selene soak} for a few seconds on small bursts: its lines, its live admin server and its exit code. */
class SoakCommandTest {

    private static final Pattern LINE = Pattern.compile("^soak +\\d+\\.\\ds  bursts +(\\d+)  rss +[\\d.]+ MiB  "
            + "heap-after-gc +[\\d.]+ MiB  threads +\\d+  fds +\\d+  records +(\\d+)  disk-records +\\d+  lost (\\d+)$");
    private static final Pattern ADMIN = Pattern.compile("admin http://127\\.0\\.0\\.1:(\\d+)/");

    private static InProcess.Run run(Consumer<ByteArrayOutputStream> whileRunning, String... args)
            throws Exception {
        return InProcess.selene(whileRunning, args);
    }

    @Test
    void soak_printsALineBeforeAndAfterEveryBurst_servesTheStatusPage_andExitsZeroWhenNothingIsLost()
            throws Exception {
        int[] statusCode = {0};
        InProcess.Run r = run(err -> {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                    .until(() -> ADMIN.matcher(err.toString(StandardCharsets.UTF_8)).find());
            Matcher m = ADMIN.matcher(err.toString(StandardCharsets.UTF_8));
            assertTrue(m.find());
            try (HttpClient http = HttpClient.newHttpClient()) {
                statusCode[0] = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + m.group(1)
                                + "/status")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode();
            } catch (Exception e) {
                throw new AssertionError("the admin server of the running soak did not answer", e);
            }
        }, "soak", "--minutes", "0.05", "--layout", "small", "--conversations", "24", "--concurrency", "4",
                "--tokens", "256", "--device", "simulated", "--admin-port", "0", "--no-warmup");

        assertEquals(0, r.exit(), r.err());
        assertEquals(200, statusCode[0], "the status page answers while the soak runs");
        List<Matcher> lines = r.out().lines().map(LINE::matcher).filter(Matcher::matches).toList();
        assertTrue(lines.size() >= 2, "a line at the start and one after each burst:\n" + r.out());
        assertEquals("0", lines.getFirst().group(1), "the first line is taken before any burst");
        for (int i = 0; i < lines.size(); i++) {
            assertEquals(Integer.toString(i), lines.get(i).group(1), "one line per burst, in order");
            assertEquals("0", lines.get(i).group(3), "nothing lost");
        }
        assertEquals(Integer.toString(24 * 8), lines.get(1).group(2),
                "the first burst's node held every record it stored (memory-only, sized for the burst)");
        assertTrue(r.out().contains("soak summary: "), r.out());
        assertTrue(r.out().contains(" 0 lost, every restored byte matched"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.strip().startsWith("heap after GC MiB")), r.out());
    }

    @Test
    void anAdminPortInUse_isOneLine_beforeAnythingIsPrintedOrCreated() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Path cwdData = Path.of(".selene-data");
            long before = Files.exists(cwdData) ? Files.list(cwdData).count() : -1;
            InProcess.Run r = run(err -> { }, "soak", "--minutes", "0.05", "--preset", "disk-only", "--layout",
                    "small", "--no-warmup", "--admin-port", Integer.toString(taken.getLocalPort()));
            assertEquals(2, r.exit(), r.err());
            assertEquals("", r.out(), "nothing printed before the refusal");
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertTrue(r.err().contains("selene.admin.port = '" + taken.getLocalPort() + "' is invalid"), r.err());
            assertEquals(before, Files.exists(cwdData) ? Files.list(cwdData).count() : -1, "no directory created");
        }
    }

    @Test
    void soak_diskOnlyPreset_withItsWarmUp_runsItsBursts_andExitsZero() throws Exception {
        // issue 26: the warm-up node of a disk-only soak had no tier (warm 0, no disk) and the soak exited 1
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "soak-tests")), "disk-only");
        InProcess.Run r = run(err -> { }, "soak", "--minutes", "0.05", "--preset", "disk-only", "--disk-dir", dir.toString(),
                "--disk-size", "256m", "--layout", "small", "--conversations", "24", "--concurrency", "4",
                "--tokens", "256", "--device", "simulated", "--admin-port", "0");

        assertEquals(0, r.exit(), r.err() + r.out());
        assertFalse(r.err().contains("no tier configured"), r.err());
        assertFalse(r.err().contains(" INFO "), "only the soak's lines and warnings on the terminal: " + r.err());
        List<Matcher> lines = r.out().lines().map(LINE::matcher).filter(Matcher::matches).toList();
        assertTrue(lines.size() >= 2, "a line at the start and one after each burst:\n" + r.out());
        assertTrue(r.out().contains(" 0 lost, every restored byte matched"), r.out());
        assertFalse(Files.exists(Path.of(dir.toAbsolutePath() + ".warmup")), "the warm-up's directory is deleted");
    }

    @Test
    void soak_withZeroMinutes_getsOneLine_andExitCode2() throws Exception {
        InProcess.Run r = run(err -> { }, "soak", "--minutes", "0");
        assertEquals(2, r.exit());
        assertEquals("selene: --minutes = '0' is invalid; allowed: a number of minutes above 0 and at most 10080, "
                + "e.g. 0.5 or 20", r.err().strip());
        assertFalse(r.err().contains("\tat "), r.err());
        assertEquals("", r.out());
    }

    @Test
    void soak_diskOptionsItsPresetHasNoUseFor_aDiskUnderOneRecord_andADirectoryThatCannotBeMade_areOneLineEach()
            throws Exception {
        String[][] cases = {
                {"--disk-dir", "/tmp/soak-x", "selene: --disk-dir needs a disk tier; use --preset 8g or disk-only"},
                {"--disk-size", "banana", "selene: --disk-size needs a disk tier; use --preset 8g or disk-only"},
        };
        for (String[] c : cases) {
            InProcess.Run r = run(err -> { }, "soak", "--minutes", "1", c[0], c[1]);
            assertEquals(2, r.exit(), r.err());
            assertEquals(c[2], r.err().strip());
        }
        InProcess.Run small = run(err -> { }, "soak", "--minutes", "1", "--preset", "disk-only", "--disk-size", "0");
        assertEquals(2, small.exit(), small.err());
        assertTrue(small.err().strip().startsWith("selene: --disk-size '0' is invalid; allowed: at least one record"),
                small.err());
        InProcess.Run proc = run(err -> { }, "soak", "--minutes", "1", "--preset", "disk-only", "--disk-dir", "/proc/nope/x");
        assertEquals(2, proc.exit(), proc.err());
        assertTrue(proc.err().strip().startsWith("selene: --disk-dir '/proc/nope/x' cannot be created ("),
                proc.err());
        assertFalse(proc.err().strip().contains("\n"), "one line: " + proc.err());
    }

    @Test
    void soak_onADiskDirectoryHoldingFiles_isRefusedWithOneLine() throws Exception {
        Path dir = Files.createTempDirectory(
                Files.createDirectories(Path.of("target", "soak-tests")), "full");
        Files.writeString(dir.resolve("notes.txt"), "keep me");
        InProcess.Run r = run(err -> { }, "soak", "--minutes", "1", "--preset", "disk-only", "--disk-dir", dir.toString());
        assertEquals(2, r.exit());
        assertTrue(r.err().strip().startsWith("selene: --disk-dir '" + dir.toAbsolutePath() + "' is not empty"),
                r.err());
        assertTrue(Files.exists(dir.resolve("notes.txt")));
    }
}
