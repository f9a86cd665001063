package dev.selene.actors.metrics;

import java.util.Map;
import java.util.ServiceLoader;

/**
 * Where a node's instruments record. The core depends on no metrics library: with {@code selene-metrics-kamon} on
 * the class path the instruments record into Kamon's registry (found with {@link ServiceLoader}), without it they
 * record nowhere and only the node's in-process counters ({@code /status}, the reports) count.
 */
public interface MetricsBackend {

    /** The unit of an instrument's values. */
    enum Unit {
        NONE, BYTES, NANOSECONDS
    }

    /** A monotonic count. */
    interface Counter {
        void increment(long n);

        default void increment() {
            increment(1);
        }
    }

    /** A value that goes up and down. */
    interface Gauge {
        void update(double value);
    }

    /** A distribution of recorded values. */
    interface Histogram {
        void record(long value);
    }

    /** The counter {@code name} with {@code tags}. */
    Counter counter(String name, String description, Unit unit, Map<String, String> tags);

    /** The gauge {@code name} with {@code tags}. */
    Gauge gauge(String name, String description, Unit unit, Map<String, String> tags);

    /** The histogram {@code name} with {@code tags}. */
    Histogram histogram(String name, String description, Unit unit, Map<String, String> tags);

    /** The backend a module on the class path (or module path) provides, else one that records nothing. */
    static MetricsBackend installed() {
        return ServiceLoader.load(MetricsBackend.class, MetricsBackend.class.getClassLoader()).findFirst()
                .orElse(Nowhere.INSTANCE);
    }

    /** Records nothing. */
    enum Nowhere implements MetricsBackend {
        INSTANCE;

        @Override
        public Counter counter(String name, String description, Unit unit, Map<String, String> tags) {
            return n -> { };
        }

        @Override
        public Gauge gauge(String name, String description, Unit unit, Map<String, String> tags) {
            return v -> { };
        }

        @Override
        public Histogram histogram(String name, String description, Unit unit, Map<String, String> tags) {
            return v -> { };
        }
    }
}
