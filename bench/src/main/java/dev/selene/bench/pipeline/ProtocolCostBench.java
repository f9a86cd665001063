package dev.selene.bench.pipeline;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.PublishResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.SimulatedDevice;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The CPU the actor protocol spends per publication, with the copy made negligible: records of one 4 KiB slot
 * (no row) published into a memory-only node that evicts its coldest records once full, {@code concurrency}
 * publications in flight. It measures, over the timed window, the CPU time of every Java thread grouped by role
 * (the actor dispatchers, the simulated copy engine, the publishing thread) and of the whole process (JIT and GC
 * included) and the heap allocated by every Java thread, divided by the publications stored; and it records JFR
 * execution samples during the same window and prints the methods and the Pekko phases (spawning and stopping
 * actors, message adapters, timers) that the dispatchers' samples fall in.
 *
 * <p>Usage: {@code [records] [warm-up records] [concurrency]} (defaults 200000, 100000, 64). Run with
 * {@code --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow}.
 */
public final class ProtocolCostBench {

    /** One slot of 4 KiB per record, no row: the copy costs well under a microsecond. */
    private static final Layout TINY = new Layout("tiny", 1, 4096, 0, 1, 16);
    private static final long WARM_BYTES = 64L << 20;
    /** The catalog actor and the parts it delegates to (its slot ledger is shown apart). */
    private static final Set<String> CATALOG_PARTS = Set.of("Catalog", "CatalogCore", "Publications", "Spills",
            "Restores", "Recovery", "Operators", "CatalogViews");

    private ProtocolCostBench() {
    }

    public static void main(String[] args) throws Exception {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int warmUp = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        int concurrency = args.length > 2 ? Integer.parseInt(args[2]) : 64;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        com.sun.management.ThreadMXBean allocated = (com.sun.management.ThreadMXBean) threads;
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try (SimulatedDevice copier = SimulatedDevice.create()) {
            CacheConfig config = CacheConfig.memoryOnly(TINY, WARM_BYTES).withConcurrency(concurrency);
            long base = copier.allocateDevice(DevicePlacement.bytesNeeded(TINY, false));
            DevicePlacement snapshot = DevicePlacement.contiguous(TINY, base, false);
            try (SeleneCache cache = SeleneCache.start(config, copier)) {
                publish(cache, snapshot, 0, warmUp, concurrency);
                System.gc();
                Path jfr = Files.createTempFile("protocol-cost", ".jfr");
                Map<String, Long> cpu0 = cpuByRole(threads);
                long process0 = os.getProcessCpuTime();
                long allocated0 = allocated.getTotalThreadAllocatedBytes();
                long t0 = System.nanoTime();
                long stored;
                try (Recording recording = new Recording()) {
                    recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(2));
                    recording.start();
                    stored = publish(cache, snapshot, warmUp, records, concurrency);
                    recording.stop();
                    recording.dump(jfr);
                }
                long wall = System.nanoTime() - t0;
                long process = os.getProcessCpuTime() - process0;
                long allocatedBytes = allocated.getTotalThreadAllocatedBytes() - allocated0;
                Map<String, Long> cpu1 = cpuByRole(threads);
                System.out.printf(Locale.ROOT, "publications stored: %d of %d in %.2f s (%.0f per second), %d in "
                        + "flight%n", stored, records, wall / 1e9, stored / (wall / 1e9), concurrency);
                System.out.printf(Locale.ROOT, "process CPU per publication: %.1f us (JIT and GC included)%n",
                        process / 1e3 / stored);
                System.out.printf(Locale.ROOT, "heap allocated per publication: %d bytes (every Java thread)%n",
                        allocatedBytes / stored);
                for (String role : cpu1.keySet()) {
                    long used = cpu1.get(role) - cpu0.getOrDefault(role, 0L);
                    System.out.printf(Locale.ROOT, "  %-22s %7.1f us per publication%n", role, used / 1e3 / stored);
                }
                printSamples(jfr);
                Files.deleteIfExists(jfr);
            }
        }
    }

    /** Publishes records {@code first .. first+count-1}, {@code concurrency} at a time; returns how many stored. */
    private static long publish(SeleneCache cache, DevicePlacement snapshot, int first, int count, int concurrency)
            throws InterruptedException {
        Semaphore permits = new Semaphore(concurrency);
        AtomicLong stored = new AtomicLong();
        for (int i = first; i < first + count; i++) {
            permits.acquire();
            RecordSpec spec = new RecordSpec(new RecordKey("bench", i), null, false);
            CompletableFuture<PublishResult> f = cache.publish(spec, snapshot, Duration.ofSeconds(30))
                    .toCompletableFuture();
            f.whenComplete((r, e) -> {
                if (r instanceof PublishResult.Stored) {
                    stored.incrementAndGet();
                }
                permits.release();
            });
        }
        permits.acquire(concurrency);
        return stored.get();
    }

    /** CPU nanoseconds of the live Java threads, summed by role. */
    private static Map<String, Long> cpuByRole(ThreadMXBean threads) {
        Map<String, Long> byRole = new TreeMap<>();
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            long cpu = threads.getThreadCpuTime(info.getThreadId());
            if (cpu > 0) {
                byRole.merge(role(info.getThreadName()), cpu, Long::sum);
            }
        }
        return byRole;
    }

    private static String role(String name) {
        if (name.contains("dispatcher")) {
            return "actor dispatchers";
        }
        if (name.startsWith("sim-copy")) {
            return "copy engine";
        }
        if (name.equals("main")) {
            return "publishing thread";
        }
        return "other Java threads";
    }

    /**
     * The JFR samples of every thread: the dispatchers' by innermost phase and top frame, and for all threads the
     * share of samples whose stack passes through each of a few mechanisms (inclusive, so they may overlap).
     */
    private static void printSamples(Path jfr) throws java.io.IOException {
        Map<String, Integer> top = new HashMap<>();
        Map<String, Integer> phases = new TreeMap<>();
        Map<String, Integer> inclusive = new TreeMap<>();
        int samples = 0;
        int all = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(jfr)) {
            if (!e.getEventType().getName().equals("jdk.ExecutionSample") || e.getStackTrace() == null) {
                continue;
            }
            List<RecordedFrame> frames = e.getStackTrace().getFrames();
            all++;
            for (String mechanism : mechanisms(frames)) {
                inclusive.merge(mechanism, 1, Integer::sum);
            }
            String thread = e.getThread("sampledThread") == null ? "" : e.getThread("sampledThread").getJavaName();
            if (thread == null || !thread.contains("dispatcher")) {
                continue;
            }
            samples++;
            if (!frames.isEmpty()) {
                RecordedFrame f = frames.getFirst();
                top.merge(f.getMethod().getType().getName() + "." + f.getMethod().getName(), 1, Integer::sum);
            }
            phases.merge(phase(frames), 1, Integer::sum);
        }
        System.out.printf(Locale.ROOT, "samples, all threads: %d; inclusive shares:%n", all);
        int total = Math.max(1, all);
        inclusive.forEach((m, n) -> System.out.printf(Locale.ROOT, "  %-40s %5.1f%%%n", m, 100.0 * n / total));
        System.out.printf(Locale.ROOT, "dispatcher samples: %d, by innermost phase:%n", samples);
        int dispatcher = Math.max(1, samples);
        phases.forEach((p, n) -> System.out.printf(Locale.ROOT, "  %-40s %5.1f%%%n", p, 100.0 * n / dispatcher));
        System.out.println("dispatchers' top frames:");
        top.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(12)
                .forEach(t -> System.out.printf(Locale.ROOT, "  %5.1f%%  %s%n", 100.0 * t.getValue() / dispatcher,
                        t.getKey()));
    }

    /** The mechanisms a stack passes through (each named once). */
    private static java.util.Set<String> mechanisms(List<RecordedFrame> frames) {
        java.util.Set<String> found = new java.util.TreeSet<>();
        for (RecordedFrame f : frames) {
            String type = f.getMethod().getType().getName();
            String method = f.getMethod().getName();
            if (method.equals("spawnAnonymous") || method.equals("spawn")) {
                found.add("spawn an actor (caller side)");
            } else if (type.endsWith("ActorCell") && method.equals("create")) {
                found.add("start an actor (its Create message)");
            } else if (method.equals("finishTerminate") || method.equals("handleChildTerminated")) {
                found.add("stop an actor");
            } else if (type.contains("PromiseActorRef") || type.contains("AskPattern")) {
                found.add("ask (temporary actor, timeout)");
            } else if (type.startsWith("dev.selene.actors.trace")) {
                found.add("trace book");
            } else if (type.startsWith("dev.selene.actors.metrics") || type.startsWith("kamon")) {
                found.add("metrics");
            } else if (type.contains("Scheduler") || type.contains("TimerScheduler")) {
                found.add("timers and scheduler");
            } else if (type.equals("dev.selene.actors.cache.SlotLedger")) {
                found.add("SlotLedger (the catalog's slots)");
            } else if (type.startsWith("dev.selene.actors.cache.")
                    && CATALOG_PARTS.contains(type.substring("dev.selene.actors.cache.".length()))) {
                found.add("Catalog");
            } else if (type.startsWith("dev.selene.actors.cache.RecordActor")) {
                found.add("RecordActor");
            } else if (type.equals("dev.selene.actors.cache.HostCache") || type.startsWith("dev.selene.actors.cache"
                    + ".HostCache$")) {
                found.add("HostCache");
            } else if (type.startsWith("dev.selene.transport.gpu.SimulatedDevice")) {
                found.add("simulated copy engine");
            } else if (type.contains("ForkJoinPool") && (method.equals("awaitWork") || method.equals("signalWork"))) {
                found.add("thread park/unpark");
            }
        }
        return found;
    }

    /**
     * The innermost phase a sample's stack is in: a Pekko mechanism (spawning or stopping an actor, a message
     * adapter, a timer), the trace book, Selene's own code (by class), or the dispatch machinery below them.
     */
    private static String phase(List<RecordedFrame> frames) {
        for (RecordedFrame f : frames) {
            String type = f.getMethod().getType().getName();
            String method = f.getMethod().getName();
            if (method.equals("spawnAnonymous") || method.equals("spawn") || method.startsWith("makeChild")) {
                return "pekko: spawn an actor";
            }
            if (method.equals("finishTerminate") || method.equals("handleChildTerminated")
                    || method.equals("terminate") || (method.equals("stop") && type.contains("Context"))) {
                return "pekko: stop an actor";
            }
            if (method.equals("messageAdapter") || method.contains("FunctionRef") || type.contains("AdaptMessage")
                    || type.contains("AdaptWithRegisteredMessageAdapter")) {
                return "pekko: message adapters";
            }
            if (type.contains("TimerScheduler")) {
                return "pekko: timers";
            }
            if (type.startsWith("dev.selene.actors.trace")) {
                return "selene: trace book";
            }
            if (type.startsWith("dev.selene.")) {
                String simple = type.substring(type.lastIndexOf('.') + 1);
                int nested = simple.indexOf('$');
                return "selene: " + (nested > 0 ? simple.substring(0, nested) : simple);
            }
        }
        return "dispatch, mailboxes, messages";
    }
}
