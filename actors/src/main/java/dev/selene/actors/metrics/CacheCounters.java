package dev.selene.actors.metrics;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The node's monotonic counters, by name with bounded label values baked in (e.g. {@code publish.stored},
 * {@code abandoned.no_space}): the in-process snapshot that {@code /status}, the status page and the reports read.
 * Only {@link CacheMetrics} counts into them, so every name is written in that one class. Thread-safe.
 */
public final class CacheCounters {

    private final ConcurrentHashMap<String, LongAdder> counters = new ConcurrentHashMap<>();

    /** Adds one to {@code name}. */
    void increment(String name) {
        add(name, 1);
    }

    /** Adds {@code n} to {@code name}. */
    void add(String name, long n) {
        LongAdder a = counters.get(name);
        (a != null ? a : counters.computeIfAbsent(name, k -> new LongAdder())).add(n);
    }

    /** Raises {@code name} to {@code value} if that is higher: a high-water mark. */
    void max(String name, long value) {
        LongAdder a = counters.computeIfAbsent(name, k -> new LongAdder());
        synchronized (a) {
            long now = a.sum();
            if (value > now) {
                a.add(value - now);
            }
        }
    }

    /** The current value of {@code name} (0 when never incremented). */
    public long get(String name) {
        LongAdder a = counters.get(name);
        return a == null ? 0 : a.sum();
    }

    /** Every counter, sorted by name. */
    public Map<String, Long> snapshot() {
        Map<String, Long> out = new TreeMap<>();
        counters.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }
}
