package dev.selene.node.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The exit codes of {@code selene} in a real process for what cannot run on this machine: a warm tier beyond the host
 * budget or the machine's memory, a disk directory that cannot be used. Each is
 * refused with one line on standard error and exit code 2 (bad input or environment), never a stack trace. A pool
 * host that reaches no manager is {@link PoolHostStartProcessTest}'s (it waits out the join timeout: the slow tier).
 */
class ExitCodesProcessTest {

    record Exit(int code, List<String> err, String out) {
    }

    static Exit selene(Path dir, String... args) throws Exception {
        return selene(dir, Map.of(), args);
    }

    static Exit selene(Path dir, Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx256m",
                "-Dlogback.configurationFile=logback.xml", "-cp", classpath(), "dev.selene.node.cli.SeleneMain"));
        cmd.addAll(List.of(args));
        Path err = dir.resolve("err.txt");
        Path out = dir.resolve("out.txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(new File(".")).redirectError(err.toFile())
                .redirectOutput(out.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        try {
            assertTrue(p.waitFor(90, TimeUnit.SECONDS), "still running after 90 s: " + String.join(" ", args));
        } finally {
            p.destroyForcibly();
        }
        return new Exit(p.exitValue(), java.nio.file.Files.readAllLines(err, StandardCharsets.UTF_8),
                java.nio.file.Files.readString(out, StandardCharsets.UTF_8));
    }

    private static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

    /** Exit 2 with one line on standard error, starting with {@code start}; that line. */
    private static String refusedWithOneLine(Exit e, String start) {
        assertEquals(2, e.code(), String.join("\n", e.err()));
        assertEquals(1, e.err().size(), "one line: " + String.join("\n", e.err()));
        assertTrue(e.err().getFirst().startsWith(start), e.err().getFirst());
        assertEquals("", e.out());
        return e.err().getFirst();
    }

    @Test
    void aLogLevelTheLoggingLibraryDoesNotKnow_isRefusedWithOneLine_exit2(@TempDir Path tmp) throws Exception {
        // Taken as DEBUG by the logging library otherwise: a terminal full of the libraries' debug lines.
        assertEquals("selene: SELENE_LOG_LEVEL = 'BOGUS' is invalid; allowed: ALL, TRACE, DEBUG, INFO, WARN, ERROR, "
                        + "OFF (INFO when it is not set)",
                refusedWithOneLine(selene(tmp, Map.of("SELENE_LOG_LEVEL", "BOGUS"), "serve", "--admin-port", "0",
                        "--log-file", tmp.resolve("a.log").toString()), "selene: SELENE_LOG_LEVEL"));
    }

    @Test
    void seleneAlone_printsTheUsageOnStandardError_exit2(@TempDir Path tmp) throws Exception {
        Exit e = selene(tmp);
        assertEquals(2, e.code());
        assertEquals("", e.out());
        assertTrue(e.err().getFirst().startsWith("Usage: selene"), String.join("\n", e.err()));
        assertTrue(e.err().stream().anyMatch(l -> l.trim().startsWith("burst")), "the commands are listed");
    }

    @Test
    void burst_withAWarmTierBeyondTheHostBudget_isRefusedWithOneLine_exit2(@TempDir Path tmp) throws Exception {
        for (String warm : List.of("30g", "99t")) {
            String line = refusedWithOneLine(selene(tmp, "burst", "--warm", warm, "--device", "simulated"),
                    "selene: --warm = '" + warm + "' is invalid: the warm tier and the smallest intake");
            assertTrue(line.endsWith("do not fit the host budget of 16384 MiB; allowed: a warm tier of at most "
                    + "16368 MiB"), line);
        }
    }

    @Test
    void serve_withAWarmTierBeyondTheHostBudget_orTheMachinesMemory_isRefusedWithOneLine_exit2(@TempDir Path tmp)
            throws Exception {
        String budget = refusedWithOneLine(selene(tmp, "serve", "--warm", "30g", "--admin-port", "0",
                "--log-file", tmp.resolve("a.log").toString()), "selene: selene.warm = '30g' is invalid: ");
        assertTrue(budget.endsWith("or a larger selene.host-budget (--warm)"), budget);
        String machine = refusedWithOneLine(selene(tmp, "serve", "--warm", "99t", "--host-budget", "200t",
                "--admin-port", "0", "--log-file", tmp.resolve("b.log").toString()),
                "selene: selene.warm = '99.0 TiB' is invalid: the node maps ");
        assertTrue(machine.contains(" MiB of host memory (warm tier and intake) and this machine has "), machine);
        assertFalse(tmp.resolve("b.log").toFile().exists(), "refused before its log file is created");
    }

    @Test
    void burst_onADiskDirectoryThatCannotBeUsed_isRefusedWithOneLine_exit2(@TempDir Path tmp) throws Exception {
        Path missing = tmp.resolve("no-such-dir");
        String line = refusedWithOneLine(selene(tmp, "burst", "--preset", "disk-only", "--disk-dir",
                missing.toString(), "--layout", "small", "--no-warmup", "--no-progress"),
                "selene: --disk-dir = '" + missing.toAbsolutePath() + "' is invalid: no such directory");
        assertFalse(missing.toFile().exists(), "a --disk-dir given is never created, as serve does: " + line);
        // /proc/1 exists and takes no file, even for root (a read-only directory would not stop root)
        refusedWithOneLine(selene(tmp, "burst", "--preset", "disk-only", "--disk-dir", "/proc/1", "--layout", "small",
                "--no-warmup", "--no-progress"), "selene: --disk-dir = '/proc/1' is invalid: ");
    }
}
