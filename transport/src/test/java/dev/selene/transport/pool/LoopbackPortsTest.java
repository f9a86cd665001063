package dev.selene.transport.pool;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoopbackPortsTest {

    @Test
    void reserve_givesDistinctPortsBelowTheEphemeralRange_eachFreeToBind() throws IOException {
        int low = Integer.parseInt(Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).getFirst().trim()
                .split("\\s+")[0]);
        List<Integer> ports = LoopbackPorts.reserve(8);
        assertEquals(8, new HashSet<>(ports).size(), "distinct: " + ports);
        for (int port : ports) {
            assertTrue(port < low && port >= 1024, port + " lies below the ephemeral range starting at " + low);
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress("127.0.0.1", port));
            }
        }
        List<Integer> more = LoopbackPorts.reserve(8);
        for (int port : more) {
            assertFalse(ports.contains(port), port + " was handed out twice: " + ports + " then " + more);
        }
    }

    @Test
    void reserve_skipsAPortSomebodyListensOn() throws IOException {
        int taken = LoopbackPorts.reserve();
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(taken));
            // The cursor wraps after the whole span: ask for the span's worth and check the taken one never comes.
            for (int i = 0; i < 20; i++) {
                assertFalse(LoopbackPorts.reserve(500).contains(taken), "a port in use was handed out");
            }
        }
    }
}
