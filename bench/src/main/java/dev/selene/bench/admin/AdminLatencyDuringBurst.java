package dev.selene.bench.admin;

import dev.selene.engine.layout.Layout;
import dev.selene.node.burst.BurstReport;
import dev.selene.node.burst.BurstRun;
import dev.selene.node.burst.BurstSettings;
import dev.selene.node.config.SettingsLoader;
import dev.selene.node.serve.SeleneNode;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Admin latency while the real {@code selene burst} workload runs against a served node: the burst's node is a
 * {@link SeleneNode} (cache + admin server on a free loopback port), and one client fires {@code GET /status}
 * and {@code GET /metrics} back to back from the node's start to the end of the probe.
 * Usage: {@code [conversations]} (default 128, the burst's default).
 */
public final class AdminLatencyDuringBurst {

    private AdminLatencyDuringBurst() {
    }

    public static void main(String[] args) throws Exception {
        int conversations = args.length > 0 ? Integer.parseInt(args[0]) : 128;
        Layout layout = Layout.deepseekTp4();
        BurstSettings sizing = new BurstSettings(layout, conversations, 32, 3072, 2, 0, 2000, "simulated", 1, 0, 42,
                false, false, null);
        long warm = (long) Math.ceil(sizing.slotsNeeded() * 1.1) * layout.slotBytes();
        BurstSettings settings = new BurstSettings(layout, conversations, 32, 3072, 2, warm, 2000, "simulated", 1,
                0, 42, false, false, null);
        AtomicReference<SeleneNode> node = new AtomicReference<>();
        AtomicBoolean running = new AtomicBoolean(true);
        long[][] latencies = {new long[2_000_000], new long[2_000_000]};
        int[] counts = new int[2];
        Thread client = Thread.ofPlatform().daemon().start(() -> fire(node, running, latencies, counts));
        BurstReport report = new BurstRun(settings, System.err, copier -> {
            SeleneNode n = SeleneNode.start(SettingsLoader.load(null, Map.of(
                    "selene.layout", layout.name(), "selene.warm", Long.toString(warm), "selene.concurrency", "32",
                    "selene.device", "simulated", "selene.admin.port", "0")), copier);
            node.set(n);
            return n.cache();
        }).run();
        running.set(false);
        client.join();
        node.get().close();
        System.out.printf(Locale.ROOT, "burst: %d published, %d stored, %d abandoned, %d restored full, verified %s%n",
                report.toMap().get("published"), report.toMap().get("stored"), report.abandonedTotal(),
                report.restoredFull(), report.verified());
        print("GET /status", latencies[0], counts[0]);
        print("GET /metrics", latencies[1], counts[1]);
    }

    private static void fire(AtomicReference<SeleneNode> node, AtomicBoolean running, long[][] latencies,
                             int[] counts) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        try {
            while (node.get() == null && running.get()) {
                Thread.sleep(10);
            }
            String base = "http://127.0.0.1:" + node.get().adminPort();
            HttpRequest[] requests = {HttpRequest.newBuilder(URI.create(base + "/status")).build(),
                    HttpRequest.newBuilder(URI.create(base + "/metrics")).build()};
            int i = 0;
            while (running.get() && counts[0] < latencies[0].length) {
                int which = i++ & 1;
                long start = System.nanoTime();
                HttpResponse<byte[]> r = http.send(requests[which], HttpResponse.BodyHandlers.ofByteArray());
                long took = System.nanoTime() - start;
                if (r.statusCode() != 200) {
                    throw new IllegalStateException(requests[which].uri() + " answered " + r.statusCode());
                }
                latencies[which][counts[which]++] = took;
            }
        } catch (Exception e) {
            if (running.get()) {
                System.err.println("admin client stopped: " + e);
            }
        }
    }

    private static void print(String what, long[] all, int n) {
        long[] l = Arrays.copyOf(all, n);
        Arrays.sort(l);
        if (n == 0) {
            System.out.println(what + ": no requests");
            return;
        }
        System.out.printf(Locale.ROOT, "%s: %d requests, p50 %.2f ms, p99 %.2f ms, max %.1f ms%n", what, n,
                l[n / 2] / 1e6, l[(int) Math.min(n - 1, Math.ceil(n * 0.99) - 1)] / 1e6, l[n - 1] / 1e6);
    }
}
