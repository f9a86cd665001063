package dev.selene.node.cli;

import dev.selene.transport.pool.LoopbackPorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A pool host whose managers cannot be reached stops with one line and exit code 2, as every environment problem
 * does, once its join timeout has passed (here 3 s, set with {@code selene.pool.join-timeout}; 20 s by default).
 */
class PoolHostStartProcessTest {

    @Test
    void serve_asAPoolHostWithNoManagerReachable_exits2WithTheReason(@TempDir Path tmp) throws Exception {
        int port = LoopbackPorts.reserve(); // free: no manager listens there
        java.nio.file.Path conf = tmp.resolve("host.conf");
        java.nio.file.Files.writeString(conf, "selene.pool.join-timeout = 3s\n");
        ExitCodesProcessTest.Exit e = ExitCodesProcessTest.selene(tmp, "serve", "--config", conf.toString(),
                "--layout", "small", "--warm", "8m",
                "--device", "simulated",
                "--pool-managers", "127.0.0.1:" + port, "--admin-port", "0",
                "--log-file", tmp.resolve("pool.log").toString());
        assertEquals(2, e.code(), String.join("\n", e.err()));
        assertTrue(e.err().getLast().startsWith("selene: no pool manager reachable at 127.0.0.1:" + port
                        + " within 3 s"),
                String.join("\n", e.err()));
        assertFalse(String.join("\n", e.err()).contains("\tat "), "no stack trace: " + e.err());
    }

    @Test
    void serve_asAPoolHostStoppedWhileItWaitsForItsManagers_saysItStoppedWhileStarting_exit0(@TempDir Path tmp)
            throws Exception {
        int port = LoopbackPorts.reserve();
        Path conf = tmp.resolve("host.conf");
        Files.writeString(conf, "selene.pool.join-timeout = 10s\n");
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx256m",
                "-cp", classpath(), "dev.selene.node.cli.SeleneMain", "serve", "--config", conf.toString(),
                "--layout", "small", "--warm", "8m", "--device", "simulated", "--pool-managers", "127.0.0.1:" + port,
                "--admin-port", "0", "--log-file", tmp.resolve("pool.log").toString());
        Path err = tmp.resolve("err.txt");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            // Its node logs once it starts, after serve's own signal handler is in place (a signal before it gets
            // the JVM's default: exit 143); from then its join timeout has 10 s to go.
            Path log = tmp.resolve("pool.log");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!(Files.exists(log) && Files.size(log) > 0)) {
                assertTrue(p.isAlive() && System.nanoTime() < deadline, "the node started and logged");
                Thread.sleep(50);
            }
            p.toHandle().destroy(); // SIGTERM
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "it ended");
        } finally {
            p.destroyForcibly();
        }
        List<String> lines = Files.readAllLines(err);
        assertEquals(0, p.exitValue(), String.join("\n", lines));
        assertTrue(lines.getLast().startsWith("selene serve: stopped while starting"), String.join("\n", lines));
        assertFalse(lines.stream().anyMatch(l -> l.startsWith("selene: ")), "no error line: " + lines);
    }

    private static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }
}
