package dev.selene.node.manager;

import dev.selene.node.cli.ClusterRemoval;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static dev.selene.node.manager.SeleneProcess.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A real {@code selene manager} or {@code selene serve} (a pool host) that the other members of the pool's cluster
 * downed while it was stopped (SIGSTOP past the failure detector and the split-brain resolver) exits, once resumed,
 * with code 4 and one line saying why, where a SIGTERM exits 0: a supervisor that restarts on failure restarts it.
 * The stopped member has the higher port, so that the other side, which keeps the lowest address, wins the tie.
 */
class ClusterRemovalProcessTest {

    private static final Duration START = Duration.ofSeconds(90);
    /** Failure detector (3 s), split-brain resolver (5 s), removal, on a loaded machine. */
    private static final Duration DOWNED = Duration.ofSeconds(60);

    private final List<SeleneProcess> processes = new ArrayList<>();

    @AfterEach
    void stop() {
        processes.forEach(SeleneProcess::close);
    }

    private SeleneProcess started(SeleneProcess p) {
        processes.add(p);
        return p;
    }

    /** A pool host ({@code selene serve}) on cluster port {@code port}, joining the manager on {@code manager}. */
    private SeleneProcess host(Path tmp, int port, int manager, String moreSettings) throws Exception {
        Path conf = tmp.resolve("host.conf");
        Files.writeString(conf, "selene.pool.port = " + port + "\n" + moreSettings);
        return started(SeleneProcess.start(tmp, "host", "serve", "--config", conf.toString(),
                "--layout", "small", "--warm", "8m", "--device", "simulated",
                "--pool-managers", "127.0.0.1:" + manager, "--admin-port", "0",
                "--log-file", tmp.resolve("host-node.log").toString()));
    }

    /**
     * One cluster of two managers and a pool host (the host has the highest port, the second manager the next): the
     * host is stopped and downed by the two managers (two against one), then the second manager by the first (one
     * against one, the lowest address wins the tie), then the first stops by SIGTERM.
     */
    @Test
    void aPoolHostThenAManagerTheOthersDowned_exit4WithOneLineSayingWhy_andOneStoppedBySigtermExits0(
            @TempDir Path tmp) throws Exception {
        List<Integer> ports = SeleneProcess.freePorts(3);
        SeleneProcess first = started(SeleneProcess.manager(tmp, "manager-1", ports.get(0), ports.get(0), "64m"))
                .awaitReady(START);
        SeleneProcess second = started(SeleneProcess.manager(tmp, "manager-2", ports.get(1), ports.get(0), "64m"));
        SeleneProcess host = host(tmp, ports.get(2), ports.get(0), "");
        second.awaitReady(START);
        host.awaitReady(START);
        awaitTrue(START, "both managers and the host members", () -> first.members() == 3);

        host.signal("STOP");
        awaitTrue(DOWNED, "the stopped host removed by the managers", () -> first.members() == 2);
        host.signal("CONT");
        int hostCode = host.awaitExit(DOWNED);
        assertEquals(ClusterRemoval.EXIT_CODE, hostCode, host.tail(30));
        assertEquals(ClusterRemoval.line("selene serve"), host.lines().getLast(), host.tail(30));

        second.signal("STOP");
        awaitTrue(DOWNED, "the stopped manager removed by the other", () -> first.members() == 1);
        second.signal("CONT");
        int code = second.awaitExit(DOWNED);
        List<String> lines = second.lines();
        assertEquals(ClusterRemoval.EXIT_CODE, code, second.tail(30));
        assertEquals(ClusterRemoval.line("selene manager"), lines.getLast(), second.tail(30));

        first.signal("TERM");
        assertEquals(0, first.awaitExit(Duration.ofSeconds(30)), first.tail(30));
        assertEquals("selene manager: stopped", first.lines().getLast(), first.tail(30));
    }

    /**
     * A pool host whose only manager stops by SIGTERM (it leaves the cluster, as in a restart of every manager) is
     * alone in its cluster: after the join timeout it stops by itself, exit 4 with one line, where before it served
     * on for ever dropping every record it retired.
     */
    @Test
    void aPoolHostWhoseManagersAllLeft_exits4WithOneLineSayingWhy(@TempDir Path tmp) throws Exception {
        List<Integer> ports = SeleneProcess.freePorts(2);
        SeleneProcess manager = started(SeleneProcess.manager(tmp, "manager-1", ports.get(0), ports.get(0), "64m"))
                .awaitReady(START);
        SeleneProcess host = host(tmp, ports.get(1), ports.get(0), "selene.pool.join-timeout = 5s\n");
        host.awaitReady(START);
        awaitTrue(START, "the manager and the host members", () -> manager.members() == 2);

        manager.signal("TERM");
        assertEquals(0, manager.awaitExit(Duration.ofSeconds(30)), manager.tail(30));
        assertEquals(ClusterRemoval.EXIT_CODE, host.awaitExit(DOWNED), host.tail(30));
        assertEquals(ClusterRemoval.poolLostLine("selene serve"), host.lines().getLast(), host.tail(30));
    }
}
