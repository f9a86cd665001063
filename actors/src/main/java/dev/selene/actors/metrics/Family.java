package dev.selene.actors.metrics;

import dev.selene.actors.metrics.MetricsBackend.Counter;
import dev.selene.actors.metrics.MetricsBackend.Gauge;
import dev.selene.actors.metrics.MetricsBackend.Histogram;
import dev.selene.actors.metrics.MetricsBackend.Unit;

/** One instrument's name, description and unit; {@link #withTags} makes one series of it in the backend. */
final class Family<T> {

    private interface Maker<T> {
        T make(MetricsBackend backend, String name, String description, Unit unit, Tags tags);
    }

    private static final MetricsBackend BACKEND = MetricsBackend.installed();

    private final String name;
    private final String description;
    private final Unit unit;
    private final Maker<T> maker;

    private Family(String name, String description, Unit unit, Maker<T> maker) {
        this.name = name;
        this.description = description;
        this.unit = unit;
        this.maker = maker;
    }

    static Family<Counter> counter(String name, String description) {
        return counter(name, description, Unit.NONE);
    }

    static Family<Counter> counter(String name, String description, Unit unit) {
        return new Family<>(name, description, unit, (b, n, d, u, t) -> b.counter(n, d, u, t.asMap()));
    }

    static Family<Gauge> gauge(String name, String description) {
        return gauge(name, description, Unit.NONE);
    }

    static Family<Gauge> gauge(String name, String description, Unit unit) {
        return new Family<>(name, description, unit, (b, n, d, u, t) -> b.gauge(n, d, u, t.asMap()));
    }

    static Family<Histogram> histogram(String name, String description, Unit unit) {
        return new Family<>(name, description, unit, (b, n, d, u, t) -> b.histogram(n, d, u, t.asMap()));
    }

    /** The series of this instrument with {@code tags}. */
    T withTags(Tags tags) {
        return maker.make(BACKEND, name, description, unit, tags);
    }
}
