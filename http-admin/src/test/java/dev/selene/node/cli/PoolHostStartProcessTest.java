package dev.selene.node.cli;

import dev.selene.transport.pool.LoopbackPorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

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
}
