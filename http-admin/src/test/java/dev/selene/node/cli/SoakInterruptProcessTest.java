package dev.selene.node.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** {@code selene soak} in a child JVM, stopped from outside (SIGTERM, as Ctrl-C's SIGINT) after its first burst. */
class SoakInterruptProcessTest {

    /** The test JVM's classpath (surefire's real one when it runs from a manifest-only jar). */
    private static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

    @Test
    void aSoakStoppedFromOutside_printsTheSummarySoFar_saysItWasStopped_andDeletesItsOwnDirectory(@TempDir Path dir)
            throws Exception {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx512m",
                "-cp", classpath(), "dev.selene.node.cli.SeleneMain", "soak", "--minutes", "10", "--preset",
                "disk-only", "--layout", "small", "--conversations", "8", "--concurrency", "4", "--tokens", "256",
                "--no-warmup", "--admin-port", "0", "--device", "simulated", "--disk-size", "64m");
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process child = new ProcessBuilder(cmd).directory(dir.toFile()).redirectOutput(out.toFile())
                .redirectError(err.toFile()).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.readString(out, StandardCharsets.UTF_8).contains("bursts    1")) {
                if (!child.isAlive()) {
                    fail("the soak ended (" + child.exitValue() + ") before its first burst: "
                            + Files.readString(err, StandardCharsets.UTF_8));
                }
                if (System.nanoTime() > deadline) {
                    fail("no burst finished in 120 s: " + Files.readString(err, StandardCharsets.UTF_8));
                }
                Thread.sleep(50);
            }
            child.destroy(); // SIGTERM
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the soak ended");
        } finally {
            child.destroyForcibly();
        }
        String printed = Files.readString(out, StandardCharsets.UTF_8);
        assertTrue(printed.contains("soak summary: "), printed);
        List<String> after = printed.substring(printed.indexOf("soak summary: ")).lines().toList();
        assertTrue(after.stream().noneMatch(l -> l.matches("soak\\s+[0-9.]+s\\s+bursts.*")),
                "no burst line after the summary (the burst the stop cut short prints none): " + printed);
        assertTrue(Files.readString(err, StandardCharsets.UTF_8).contains("selene soak: stopped before its time "
                + "was up; the summary covers the bursts that finished"), Files.readString(err));
        try (Stream<Path> left = Files.list(dir.resolve(".selene-data"))) {
            assertEquals(List.of(), left.toList(), "the soak's own directory is gone");
        }
    }
}
