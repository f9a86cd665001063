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
 * does, once its join timeout (20 s) has passed: in the slow tier of the tests for that wait.
 */
class PoolHostStartProcessTest {

    @Test
    void serve_asAPoolHostWithNoManagerReachable_exits2WithTheReason(@TempDir Path tmp) throws Exception {
        int port = LoopbackPorts.reserve(); // free: no manager listens there
        ExitCodesProcessTest.Exit e = ExitCodesProcessTest.selene(tmp, "serve", "--layout", "small", "--warm", "8m",
                "--device", "simulated",
                "--pool-managers", "127.0.0.1:" + port, "--admin-port", "0",
                "--log-file", tmp.resolve("pool.log").toString());
        assertEquals(2, e.code(), String.join("\n", e.err()));
        assertTrue(e.err().getLast().startsWith("selene: no pool manager reachable at 127.0.0.1:" + port),
                String.join("\n", e.err()));
        assertFalse(String.join("\n", e.err()).contains("\tat "), "no stack trace: " + e.err());
    }
}
