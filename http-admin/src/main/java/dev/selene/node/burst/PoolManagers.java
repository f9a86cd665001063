package dev.selene.node.burst;

import dev.selene.engine.layout.Layout;
import dev.selene.transport.pool.LoopbackPorts;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Pool manager JVMs for a burst: {@code selene manager} child processes of this JVM on loopback (the same java
 * binary and class path), each with its own free cluster and admin ports, the first one the seed of the others.
 * {@link #close()} stops them one by one (SIGTERM to the process, then waits for it; killed after
 * {@link #STOP_TIMEOUT} beyond its hand-off's bound); a JVM shutdown hook does the same if this JVM exits first.
 */
public final class PoolManagers implements AutoCloseable {

    /** How long the managers may take to become Up members of their cluster. */
    static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    /**
     * How long a manager may take to leave the cluster and exit after SIGTERM, beyond the time it may spend handing
     * over the records no other manager holds.
     */
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);
    /** A manager's heap: record images live off-heap, in its store's slots. */
    static final String MANAGER_HEAP = "-Xmx1g";

    /** One manager process: its cluster address ({@code 127.0.0.1:port}), admin port and log file. */
    public record Manager(Process process, String address, int adminPort, Path log) {
    }

    private final List<Manager> managers;
    private final Thread shutdownHook;
    /** How long one manager may take to stop: its hand-off's bound and {@link #STOP_TIMEOUT}. */
    private final Duration stopTimeout;

    private PoolManagers(List<Manager> managers, Layout layout, long storeBytes) {
        this.managers = managers;
        this.stopTimeout = STOP_TIMEOUT.plus(dev.selene.actors.pool.PoolManagerNode.handOffBound(layout,
                storeBytes));
        this.shutdownHook = new Thread(this::stopAll, "burst-pool-managers-stop");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts {@code count} managers for records of {@code layout}, each keeping {@code storeBytes}, placing each
     * record on {@code replicas} of them, logging to {@code logDir}/manager-N.log; returns at once (they take
     * seconds to start: {@link #awaitReady()}). Each keeps a class-data archive of its own in {@code logDir}, which
     * shortens its start on later runs.
     */
    public static PoolManagers start(int count, Layout layout, long storeBytes, int replicas, Path logDir)
            throws IOException {
        return start(count, layout, storeBytes, replicas, logDir, null);
    }

    /**
     * As {@link #start(int, Layout, long, int, Path)}, each manager with TLS on both planes from {@code certs}
     * ({@code ca.crt}, {@code pool-manager-N.crt} and {@code .key}, as {@code scripts/pool-certs.sh} makes them; null:
     * plain text on loopback).
     */
    public static PoolManagers start(int count, Layout layout, long storeBytes, int replicas, Path logDir,
                                     Path certs) throws IOException {
        Files.createDirectories(logDir);
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<Manager> started = new ArrayList<>();
        PoolManagers pool = new PoolManagers(started, layout, storeBytes);
        try {
            int seedPort = freePort();
            for (int i = 1; i <= count; i++) {
                int port = i == 1 ? seedPort : freePort();
                int adminPort = freePort();
                Path log = logDir.resolve("manager-" + i + ".log");
                List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                        "--sun-misc-unsafe-memory-access=allow", MANAGER_HEAP, "-XX:+AutoCreateSharedArchive",
                        "-XX:SharedArchiveFile=" + logDir.resolve("manager-" + i + ".jsa"),
                        // A stale archive (the jar was rebuilt) is simply recreated: not worth error lines in the log.
                        "-Xlog:cds=off", "-Xlog:cds+dynamic=off",
                        "-cp", System.getProperty("java.class.path"), "dev.selene.node.cli.SeleneMain", "manager",
                        "--layout", layout.name(), "--bind", "127.0.0.1", "--port", Integer.toString(port),
                        "--seeds", "127.0.0.1:" + seedPort, "--store-size", Long.toString(storeBytes),
                        "--replicas", Integer.toString(replicas), "--max-age", "off",
                        "--admin-bind", "127.0.0.1", "--admin-port", Integer.toString(adminPort)));
                if (certs != null) {
                    Path conf = logDir.resolve("manager-" + i + "-tls.conf");
                    Files.writeString(conf, tlsSettings(certs, "pool-manager-" + i));
                    cmd.add("--config");
                    cmd.add(conf.toString());
                }
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
                started.add(new Manager(p, "127.0.0.1:" + port, adminPort, log));
            }
            return pool;
        } catch (IOException | RuntimeException e) {
            pool.close();
            throw e;
        }
    }

    /** The {@code selene.pool.tls} settings of {@code node}'s files in {@code certs}, as HOCON. */
    public static String tlsSettings(Path certs, String node) {
        return "selene.pool.tls {\n  certificate = \"" + certs.resolve(node + ".crt") + "\"\n  private-key = \""
                + certs.resolve(node + ".key") + "\"\n  ca = \"" + certs.resolve("ca.crt") + "\"\n}\n";
    }

    private static int freePort() throws IOException {
        return LoopbackPorts.reserve();
    }

    /** Returns once every manager answers {@code /ready}; fails, naming its log, when one exits or takes too long. */
    public void awaitReady() throws InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build()) {
            for (Manager m : managers) {
                while (!ready(http, m)) {
                    if (!m.process().isAlive()) {
                        throw new IllegalStateException("pool manager " + m.address() + " exited with "
                                + m.process().exitValue() + ": " + lastLine(m.log()) + " (log: " + m.log() + ")");
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("pool manager " + m.address() + " was not ready within "
                                + START_TIMEOUT.toSeconds() + " s (log: " + m.log() + ")");
                    }
                    Thread.sleep(100);
                }
            }
        }
    }

    private static boolean ready(HttpClient http, Manager m) throws InterruptedException {
        HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + m.adminPort() + "/ready"))
                .timeout(Duration.ofSeconds(2)).build();
        try {
            return http.send(get, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false; // not listening yet
        }
    }

    private static String lastLine(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return lines.isEmpty() ? "(no output)" : lines.getLast();
        } catch (IOException e) {
            return "(log unreadable: " + e.getMessage() + ")";
        }
    }

    /**
     * CPU time the manager processes have used so far, summed, less their JIT compiler threads' (a short run
     * measures the compiler as much as the path; the host's side leaves it out too). 0 for a process whose figure
     * the system does not give.
     */
    public long cpuNanos() {
        long sum = 0;
        for (Manager m : managers) {
            long total = m.process().toHandle().info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
            sum += Math.max(0, total - compilerNanos(m.process().pid()));
        }
        return sum;
    }

    /** CPU time the manager processes' data-plane threads have used so far, summed (from /proc; 0 where absent). */
    public long dataCpuNanos() {
        long sum = 0;
        for (Manager m : managers) {
            sum += threadNanos(m.process().pid(), "selene-data");
        }
        return sum;
    }

    /** Linux's clock ticks per second, in which /proc reports thread CPU times. */
    static final long TICKS_PER_SECOND = 100;

    /** CPU time of the JIT compiler threads of process {@code pid} now alive (from /proc; 0 where it is absent). */
    static long compilerNanos(long pid) {
        return threadNanos(pid, "CompilerThre");
    }

    /** CPU time of the threads of process {@code pid} now alive whose name contains {@code name} (from /proc). */
    private static long threadNanos(long pid, String name) {
        long ticks = 0;
        for (var e : threadTicks(pid).entrySet()) {
            if (e.getKey().contains(name)) {
                ticks += e.getValue();
            }
        }
        return ticks * (1_000_000_000L / TICKS_PER_SECOND);
    }

    /**
     * CPU clock ticks ({@link #TICKS_PER_SECOND} a second) of the threads of process {@code pid} now alive, summed by
     * thread name as the kernel keeps it (15 characters at most), from /proc; empty where it is absent.
     */
    static Map<String, Long> threadTicks(long pid) {
        Map<String, Long> ticks = new TreeMap<>();
        try (var threads = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : (Iterable<Path>) threads::iterator) {
                try {
                    String name = Files.readString(t.resolve("comm")).strip();
                    String stat = Files.readString(t.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ticks.merge(name, Long.parseLong(f[11]) + Long.parseLong(f[12]), Long::sum); // utime, stime
                } catch (IOException | RuntimeException e) {
                    // the thread ended while it was read
                }
            }
        } catch (IOException e) {
            return Map.of();
        }
        return ticks;
    }

    /** The managers' cluster addresses, {@code host:port}, for {@code selene.pool.managers}. */
    public List<String> addresses() {
        return managers.stream().map(Manager::address).toList();
    }

    public List<Manager> managers() {
        return List.copyOf(managers);
    }

    /**
     * Stops every manager, the last started first: SIGTERM to one (it leaves the cluster and exits), wait for it,
     * then the next. Managers that all leave at once wait for each other's removal until a shutdown phase times out.
     */
    private void stopAll() {
        for (Manager m : managers.reversed()) {
            m.process().destroy();
            try {
                if (!m.process().waitFor(stopTimeout.toSeconds(), TimeUnit.SECONDS)) {
                    m.process().destroyForcibly();
                    m.process().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                m.process().destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        stopAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is already shutting down: the hook runs (and finds nothing left to stop)
        }
    }
}
