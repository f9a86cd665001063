package dev.selene.node.burst;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * A diagnostic for the pool preset's CPU figures: CPU time by thread name (digits left out) of the burst's process and
 * of every manager process, read from {@code /proc}, printed for each measured window (not the warm-up's) when the
 * system property {@code selene.burst.cpu-breakdown} is {@code true}. Off by default; it does nothing where
 * {@code /proc} is absent.
 */
final class ThreadCpuBreakdown {

    static final boolean ON = Boolean.getBoolean("selene.burst.cpu-breakdown");
    /** Linux's clock ticks per second, in which /proc reports thread CPU times. */
    private static final double TICKS_PER_SECOND = PoolManagers.TICKS_PER_SECOND;

    private final Supplier<List<Long>> peers;
    private final boolean on;
    private Map<String, Long> start = Map.of();

    /** A breakdown over this process and {@code peers}, printed when {@code on}. */
    ThreadCpuBreakdown(Supplier<List<Long>> peers, boolean on) {
        this.peers = peers;
        this.on = on;
    }

    void begin() {
        if (on) {
            start = snapshot();
            System.err.println("cpu breakdown window begins " + java.time.Instant.now());
        }
    }

    /** Prints the CPU seconds each thread group used since {@link #begin()}, for {@code gb} GB moved. */
    void end(String window, double gb) {
        if (!on) {
            return;
        }
        Map<String, Long> now = snapshot();
        StringBuilder line = new StringBuilder("cpu breakdown, " + window + " (ended " + java.time.Instant.now()
                + ", CPU-s per GB):");
        long total = 0;
        Map<String, Long> deltas = new TreeMap<>();
        for (var e : now.entrySet()) {
            long d = e.getValue() - start.getOrDefault(e.getKey(), 0L);
            if (d > 0) {
                deltas.put(e.getKey(), d);
                total += d;
            }
        }
        line.append(String.format(" total %.3f;", total / TICKS_PER_SECOND / gb));
        long all = total;
        deltas.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
                .filter(e -> e.getValue() * 100 >= all)
                .forEach(e -> line.append(String.format(" %s %.3f", e.getKey(), e.getValue() / TICKS_PER_SECOND / gb)));
        System.err.println(line);
    }

    private Map<String, Long> snapshot() {
        Map<String, Long> ticks = new TreeMap<>();
        add(ticks, "host ", ProcessHandle.current().pid());
        int i = 0;
        for (long pid : peers.get()) {
            add(ticks, "mgr" + i++ + " ", pid);
        }
        return ticks;
    }

    private static void add(Map<String, Long> ticks, String prefix, long pid) {
        PoolManagers.threadTicks(pid).forEach((name, t) -> ticks.merge(prefix + name.replaceAll("[0-9]+", "#"), t,
                Long::sum));
    }
}
