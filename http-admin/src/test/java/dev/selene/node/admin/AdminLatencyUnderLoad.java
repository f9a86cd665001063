package dev.selene.node.admin;

import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.node.config.SettingsLoader;
import dev.selene.node.serve.SeleneNode;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A measurement, not a test: admin endpoint latency under a burst-shaped load. A deepseek-tp4 node publishes
 * conversations of six records (32 at once, GPU snapshots that live 2 s) and restores them, while one client (or more) fires
 * {@code GET /status} and {@code GET /metrics} back to back through a real HTTP client; prints p50/p99/max.
 *
 * <p>Run: {@code java -cp <test classpath> dev.selene.node.admin.AdminLatencyUnderLoad [seconds [clients]]}.
 */
public final class AdminLatencyUnderLoad {

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int clientCount = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        Layout layout = Layout.deepseekTp4();
        try (SimulatedDevice device = SimulatedDevice.create()) {
            SeleneNode node = SeleneNode.start(SettingsLoader.load(null, Map.of(
                    "selene.layout", "deepseek-tp4", "selene.warm", "2g", "selene.concurrency", "32",
                    "selene.device", "simulated", "selene.admin.port", "0")), device);
            try {
                String base = "http://127.0.0.1:" + node.adminPort();
                AtomicBoolean running = new AtomicBoolean(true);
                AtomicLong published = new AtomicLong();
                Thread load = Thread.ofPlatform().start(() -> load(node.cache(), device, layout, running, published));
                Thread.sleep(2000);
                List<long[]> status = new ArrayList<>();
                List<long[]> metrics = new ArrayList<>();
                List<Thread> clients = new ArrayList<>();
                for (int c = 0; c < clientCount; c++) {
                    long[] s = new long[1_000_000];
                    long[] m = new long[1_000_000];
                    status.add(s);
                    metrics.add(m);
                    clients.add(Thread.ofPlatform().start(() -> fire(base, seconds, s, m)));
                }
                for (Thread t : clients) {
                    t.join();
                }
                running.set(false);
                load.join();
                print("GET /status", status);
                print("GET /metrics", metrics);
                System.out.printf(Locale.ROOT, "load: %d records published in the run%n", published.get());
            } finally {
                node.close();
            }
        }
    }

    private static void fire(String base, int seconds, long[] status, long[] metrics) {
        HttpClient http = HttpClient.newHttpClient();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        int i = 0;
        try {
            while (System.nanoTime() < end && i < status.length) {
                status[i] = time(http, base + "/status");
                metrics[i] = time(http, base + "/metrics");
                i++;
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        if (i < status.length) {
            status[i] = -1;
            metrics[i] = -1;
        }
    }

    private static long time(HttpClient http, String url) throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException(url + " answered " + r.statusCode());
        }
        return System.nanoTime() - t0;
    }

    private static void print(String what, List<long[]> runs) {
        long[] all = runs.stream().flatMapToLong(a -> Arrays.stream(a).takeWhile(v -> v > 0)).sorted().toArray();
        System.out.printf(Locale.ROOT, "%-13s %6d requests  p50 %.2f ms  p99 %.2f ms  max %.2f ms%n", what, all.length,
                all[all.length / 2] / 1e6, all[(int) Math.min(all.length - 1, Math.ceil(all.length * 0.99) - 1)] / 1e6,
                all[all.length - 1] / 1e6);
    }

    /** Conversations of six records, 32 at once, published with 2 s snapshots and then restored, until stopped. */
    private static void load(SeleneCache cache, SimulatedDevice device, Layout layout, AtomicBoolean running,
                             AtomicLong published) {
        Publisher publisher = new Publisher(cache);
        Semaphore inFlight = new Semaphore(32);
        ConcurrentLinkedQueue<CompletableFuture<?>> pending = new ConcurrentLinkedQueue<>();
        long conversation = 0;
        while (running.get()) {
            try {
                inFlight.acquire();
            } catch (InterruptedException e) {
                return;
            }
            long c = conversation++;
            long[] chain = ChainHash.chain(new long[] {c * 8, c * 8 + 1, c * 8 + 2, c * 8 + 3, c * 8 + 4, c * 8 + 5});
            List<CompletableFuture<PublishOutcome>> all = new ArrayList<>();
            List<Long> bases = new ArrayList<>();
            SnapshotLease lease = SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(2));
            for (int i = 0; i < chain.length; i++) {
                boolean row = i == chain.length - 1;
                RecordKey key = new RecordKey("load", chain[i]);
                RecordSpec spec = new RecordSpec(key, i == 0 ? null : new RecordKey("load", chain[i - 1]), row);
                long b = device.allocateDevice(DevicePlacement.bytesNeeded(layout, row));
                bases.add(b);
                DevicePlacement p = DevicePlacement.contiguous(layout, b, row);
                KeyedContent.fillRecord(device, layout, p, key, row);
                all.add(publisher.publish(spec, p, lease).toCompletableFuture());
            }
            CompletableFuture<Void> done = CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                    .thenCompose(v -> {
                        published.addAndGet(chain.length);
                        List<DevicePlacement> targets = new ArrayList<>();
                        long t = device.allocateDevice(DevicePlacement.bytesNeeded(layout, true) * chain.length);
                        bases.add(t);
                        for (int i = 0; i < chain.length; i++) {
                            targets.add(DevicePlacement.contiguous(layout,
                                    t + i * DevicePlacement.bytesNeeded(layout, true), i == chain.length - 1));
                        }
                        return cache.restore("load", chain, targets, Duration.ofHours(1)).toCompletableFuture();
                    })
                    .handle((r, e) -> {
                        bases.forEach(device::freeDevice);
                        inFlight.release();
                        return null;
                    });
            pending.add(done);
            pending.removeIf(CompletableFuture::isDone);
        }
        pending.forEach(CompletableFuture::join);
    }
}
