package dev.selene.transport.pool;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Ports for servers that a test or the burst harness starts on this machine a moment after choosing them (cluster
 * nodes in other processes, admin servers). A port the kernel hands out for "any free port" is in its ephemeral
 * range, and so is the local port of every outgoing connection: between the choice and the server's bind, any
 * connection on the machine may take it, and the server then fails to start. These ports are chosen below that
 * range, where only a server that names its port can bind, and each is checked free when chosen.
 */
public final class LoopbackPorts {

    /** The kernel's ephemeral range on Linux; its first port, or the usual default when it cannot be read. */
    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int USUAL_EPHEMERAL_LOW = 32768;
    /** How many ports below the ephemeral range are tried; fewer than this left means "any free port" instead. */
    private static final int SPAN = 10_000;

    /** The next port to try, as an offset into the span; starts where this process's id points. Guarded by class. */
    private static int cursor = (int) (ProcessHandle.current().pid() * 7919 % SPAN);

    private LoopbackPorts() {
    }

    /** One free port below the ephemeral range. */
    public static int reserve() throws IOException {
        return reserve(1).getFirst();
    }

    /** {@code n} distinct free ports below the ephemeral range, each handed out once by this process. */
    public static synchronized List<Integer> reserve(int n) throws IOException {
        int low = ephemeralLow();
        int floor = low - SPAN;
        List<Integer> ports = new ArrayList<>(n);
        if (floor < 1024) {
            // An unusual ephemeral range leaves no room below it: the kernel's choice, with its small risk.
            for (int i = 0; i < n; i++) {
                try (ServerSocket s = new ServerSocket(0)) {
                    ports.add(s.getLocalPort());
                }
            }
            return ports;
        }
        for (int tried = 0; tried < SPAN && ports.size() < n; tried++) {
            int port = floor + cursor;
            cursor = (cursor + 1) % SPAN;
            if (free(port)) {
                ports.add(port);
            }
        }
        if (ports.size() < n) {
            throw new IOException("no " + n + " free ports between " + floor + " and " + (low - 1));
        }
        return ports;
    }

    private static boolean free(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int ephemeralLow() {
        try {
            // readAllLines, not readString: a /proc file tells no size, and readString may then stop short.
            String[] range = Files.readAllLines(EPHEMERAL_RANGE).getFirst().trim().split("\\s+");
            return Integer.parseInt(range[0]);
        } catch (IOException | RuntimeException e) {
            return USUAL_EPHEMERAL_LOW;
        }
    }
}
