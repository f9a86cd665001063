package dev.selene.bench.pool;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.transport.pool.DataPlane;
import dev.selene.transport.pool.DataPlaneTls;
import dev.selene.transport.pool.NettyDataPlane;
import dev.selene.transport.pool.RecordService;
import dev.selene.transport.tls.PoolTls;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What TLS costs the pool's data plane: the raw path (off-heap ring to off-heap ring over loopback, the baseline the
 * pool burst measures against) in plain text, with TLS in the JDK's engine and with TLS in BoringSSL
 * (netty-tcnative), in one JVM, the modes taking turns round after round. Per mode and direction it prints GB/s and
 * the CPU-seconds per GB of both ends' data-plane threads together (the event loops, where TLS runs; JIT and GC
 * threads left out), each round's figures and their medians.
 *
 * <p>Usage: {@code DataPlaneTlsBench [--gib 1] [--rounds 5] [--chunk-kib 256] [--certs DIR]}: DIR holds
 * {@code ca.crt}, {@code pool-manager-1.crt/.key} and {@code host-a.crt/.key} ({@code scripts/pool-certs.sh DIR
 * pool-manager-1 host-a} makes them; without the option the bench runs the script into a temporary directory).
 */
public final class DataPlaneTlsBench {

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    private DataPlaneTlsBench() {
    }

    private record Mode(String name, DataPlaneTls server, DataPlaneTls client) {
    }

    public static void main(String[] args) throws Exception {
        long gib = 1;
        int rounds = 5;
        int chunk = 256 << 10;
        Path certs = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--gib" -> gib = Long.parseLong(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--chunk-kib" -> chunk = Integer.parseInt(args[++i]) << 10;
                case "--certs" -> certs = Path.of(args[++i]);
                default -> {
                    System.err.println("DataPlaneTlsBench: unknown option " + args[i]
                            + "; allowed: --gib N, --rounds N, --chunk-kib N, --certs DIR");
                    System.exit(2);
                }
            }
        }
        if (certs == null) {
            certs = Files.createTempDirectory("selene-bench-certs");
            Process p = new ProcessBuilder("scripts/pool-certs.sh", certs.toString(), "pool-manager-1", "host-a")
                    .inheritIO().start();
            if (p.waitFor() != 0) {
                System.err.println("DataPlaneTlsBench: scripts/pool-certs.sh failed (run from the repository root)");
                System.exit(2);
            }
        }
        MX.setThreadCpuTimeEnabled(true);
        PoolTls server = PoolTls.of(files(certs, "pool-manager-1"));
        PoolTls client = PoolTls.of(files(certs, "host-a"));
        List<Mode> modes = new ArrayList<>();
        modes.add(new Mode("plain", null, null));
        modes.add(new Mode("tls-jdk", new DataPlaneTls(server, PoolTls.Engine.JDK),
                new DataPlaneTls(client, PoolTls.Engine.JDK)));
        if (PoolTls.openSslAvailable()) {
            modes.add(new Mode("tls-openssl", new DataPlaneTls(server, PoolTls.Engine.OPENSSL),
                    new DataPlaneTls(client, PoolTls.Engine.OPENSSL)));
        } else {
            System.err.println("DataPlaneTlsBench: BoringSSL does not load here; OpenSSL left out");
        }
        long bytes = gib << 30;
        Map<String, List<double[]>> results = new LinkedHashMap<>();
        NettyDataPlane.Backend backend = NettyDataPlane.Backend.best();
        System.out.printf(Locale.ROOT, "# %d GiB each way per round, %d KiB chunks, %s, %d rounds, modes in turn%n",
                gib, chunk >> 10, backend.name().toLowerCase(Locale.ROOT), rounds);
        final int ck = chunk;
        for (int round = 0; round <= rounds; round++) {
            for (Mode m : modes) {
                try (DataPlane s = NettyDataPlane.serve("127.0.0.1", 0, null, backend, Duration.ofSeconds(10), 1,
                        NOTHING, m.server());
                     DataPlane c = NettyDataPlane.client(backend, Duration.ofSeconds(10), 1, m.client())) {
                    double[] push = measure(() -> c.rawPush(s.address(), bytes, ck), bytes);
                    double[] fetch = measure(() -> c.rawFetch(s.address(), bytes, ck), bytes);
                    if (round == 0) {
                        continue; // warm-up round: JIT, first connections
                    }
                    results.computeIfAbsent(m.name() + " push", k -> new ArrayList<>()).add(push);
                    results.computeIfAbsent(m.name() + " fetch", k -> new ArrayList<>()).add(fetch);
                    System.out.printf(Locale.ROOT, "round %d %-12s push %.2f GB/s %.2f CPU-s/GB   fetch %.2f GB/s "
                            + "%.2f CPU-s/GB%n", round, m.name(), push[0], push[1], fetch[0], fetch[1]);
                }
            }
        }
        System.out.println("# medians");
        System.out.println("| mode | direction | GB/s | CPU-s per GB |");
        System.out.println("|---|---|---|---|");
        for (var e : results.entrySet()) {
            String[] k = e.getKey().split(" ");
            System.out.printf(Locale.ROOT, "| %s | %s | %.2f | %.2f |%n", k[0], k[1],
                    median(e.getValue(), 0), median(e.getValue(), 1));
        }
        System.exit(0);
    }

    private static PoolTls.Files files(Path dir, String node) {
        return new PoolTls.Files(dir.resolve(node + ".crt"), dir.resolve(node + ".key"), dir.resolve("ca.crt"));
    }

    private interface Run {
        dev.selene.transport.pool.Transfer<Long> start();
    }

    /** GB/s and CPU-s per GB of the data-plane threads for one transfer. */
    private static double[] measure(Run run, long bytes) throws Exception {
        long cpu0 = dataCpuNanos();
        long t0 = System.nanoTime();
        long moved = run.start().done().get(10, TimeUnit.MINUTES);
        long t1 = System.nanoTime();
        long cpu1 = dataCpuNanos();
        if (moved != bytes) {
            throw new IllegalStateException("moved " + moved + " of " + bytes);
        }
        double gb = bytes / 1e9;
        return new double[]{gb / ((t1 - t0) / 1e9), ((cpu1 - cpu0) / 1e9) / gb};
    }

    private static long dataCpuNanos() {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("selene-data")) {
                sum += Math.max(0, MX.getThreadCpuTime(t.threadId()));
            }
        }
        return sum;
    }

    private static double median(List<double[]> xs, int i) {
        double[] v = xs.stream().mapToDouble(x -> x[i]).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** Raw transfers ask no store. */
    private static final RecordService NOTHING = new RecordService() {
        @Override
        public void offered(RecordSpec spec, long imageBytes, Admission admission) {
            admission.refuse("the bench stores nothing");
        }

        @Override
        public void requested(RecordKey key, Delivery delivery) {
            delivery.notHeld("the bench holds nothing");
        }
    };
}
