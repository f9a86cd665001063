package dev.selene.node.replay;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** {@code selene replay --disk-dir DIR} in a child JVM, ended from outside while its node writes to disk. */
class ReplayInterruptProcessTest {

    /** The test JVM's classpath (surefire's real one when it runs from a manifest-only jar). */
    private static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

    /** Files anywhere under {@code dir}, directories left out (0 when one went away while they were counted). */
    private static long files(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).count();
        } catch (UncheckedIOException e) {
            return 0;
        }
    }

    @Test
    void aReplayEndedFromOutside_leavesNothingInItsDiskDir(@TempDir Path dir) throws Exception {
        Path disk = Files.createDirectory(dir.resolve("disk"));
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx512m",
                "-cp", classpath(), "dev.selene.node.cli.SeleneMain", "replay", "--generate", "short-chats",
                "--requests", "100000", "--warm", "16m", "--disk-dir", disk.toString(), "--disk-size", "1g",
                "--no-progress");
        Process child = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (files(disk) < 20) {
                if (!child.isAlive()) {
                    fail("the replay ended (" + child.exitValue() + ") before writing records to disk");
                }
                if (System.nanoTime() > deadline) {
                    fail("the replay wrote no records to disk in 90 s");
                }
                Thread.sleep(20);
            }
            child.destroy(); // SIGTERM, as Ctrl-C's SIGINT: the JVM runs its shutdown hooks
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the replay ended");
        } finally {
            child.destroyForcibly();
        }
        try (Stream<Path> left = Files.list(disk)) {
            assertEquals(List.of(), left.toList(), "the replay's own directory is gone");
        }
    }
}
