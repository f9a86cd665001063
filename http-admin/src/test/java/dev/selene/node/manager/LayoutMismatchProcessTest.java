package dev.selene.node.manager;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * #23 item 3: a pool host whose layout its manager does not hold is refused at join, as real processes: the host
 * ({@code selene serve}) exits 2 with exactly one line on its terminal naming both layouts (its log file keeps the
 * node's own lines), and is never ready.
 */
class LayoutMismatchProcessTest {

    private static final Duration START = Duration.ofSeconds(90);

    private final List<SeleneProcess> processes = new ArrayList<>();

    @AfterEach
    void stop() {
        processes.forEach(SeleneProcess::close);
    }

    @Test
    void aHostOfAnotherLayoutThanItsManager_exits2_withOneLineOnItsTerminalNamingBothLayouts(@TempDir Path tmp)
            throws Exception {
        int port = SeleneProcess.freePorts(1).getFirst();
        SeleneProcess manager = SeleneProcess.manager(tmp, "manager", port, port, "16m");
        processes.add(manager);
        manager.awaitReady(START);

        Path hostLog = tmp.resolve("host-node.log");
        SeleneProcess host = SeleneProcess.start(tmp, "host", "serve", "--layout", "deepseek-tp4", "--warm", "64m",
                "--device", "simulated", "--pool-managers", "127.0.0.1:" + port, "--admin-port", "0",
                "--log-file", hostLog.toString());
        processes.add(host);
        assertEquals(2, host.awaitExit(START), host.tail(20));
        List<String> terminal = host.lines();
        assertEquals(1, terminal.size(), "one line on the terminal: " + terminal);
        String line = terminal.getFirst();
        assertTrue(line.startsWith("selene: pool manager ") && line.contains("holds the small layout")
                && line.contains("this host the deepseek-tp4 layout"), line);
        assertTrue(Files.readString(hostLog).contains("the node could not start"),
                "the log file keeps the node's own line");
    }
}
