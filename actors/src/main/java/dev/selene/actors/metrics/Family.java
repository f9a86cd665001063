package dev.selene.actors.metrics;

import dev.selene.actors.metrics.MetricsBackend.Counter;
import dev.selene.actors.metrics.MetricsBackend.Gauge;
import dev.selene.actors.metrics.MetricsBackend.Histogram;
import dev.selene.actors.metrics.MetricsBackend.Unit;

import java.util.Map;
import java.util.function.Function;

/** One instrument's name, description and unit; {@link #withTags} makes one series of it in the backend. */
final class Family<T> {

    private static final MetricsBackend BACKEND = MetricsBackend.installed();

    private final Function<Map<String, String>, T> series;

    private Family(Function<Map<String, String>, T> series) {
        this.series = series;
    }

    static Family<Counter> counter(String name, String description) {
        return counter(name, description, Unit.NONE);
    }

    static Family<Counter> counter(String name, String description, Unit unit) {
        return new Family<>(tags -> BACKEND.counter(name, description, unit, tags));
    }

    static Family<Gauge> gauge(String name, String description) {
        return gauge(name, description, Unit.NONE);
    }

    static Family<Gauge> gauge(String name, String description, Unit unit) {
        return new Family<>(tags -> BACKEND.gauge(name, description, unit, tags));
    }

    static Family<Histogram> histogram(String name, String description, Unit unit) {
        return new Family<>(tags -> BACKEND.histogram(name, description, unit, tags));
    }

    /** The series of this instrument with {@code tags}. */
    T withTags(Tags tags) {
        return series.apply(tags.asMap());
    }
}
