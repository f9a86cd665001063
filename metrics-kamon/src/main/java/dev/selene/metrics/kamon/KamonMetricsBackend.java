package dev.selene.metrics.kamon;

import dev.selene.actors.metrics.MetricsBackend;
import kamon.Kamon;
import kamon.metric.MeasurementUnit;
import kamon.tag.TagSet;

import java.util.Map;

/**
 * The node's instruments in Kamon's registry: each series is a Kamon instrument of the same name, description, unit
 * and tags. Found by the core through {@link java.util.ServiceLoader} when this module is on the class path.
 */
public final class KamonMetricsBackend implements MetricsBackend {

    @Override
    public Counter counter(String name, String description, Unit unit, Map<String, String> tags) {
        kamon.metric.Counter c = Kamon.counter(name, description, unit(unit)).withTags(tagSet(tags));
        return c::increment;
    }

    @Override
    public Gauge gauge(String name, String description, Unit unit, Map<String, String> tags) {
        kamon.metric.Gauge g = Kamon.gauge(name, description, unit(unit)).withTags(tagSet(tags));
        return g::update;
    }

    @Override
    public Histogram histogram(String name, String description, Unit unit, Map<String, String> tags) {
        kamon.metric.Histogram h = Kamon.histogram(name, description, unit(unit)).withTags(tagSet(tags));
        return h::record;
    }

    private static TagSet tagSet(Map<String, String> tags) {
        TagSet set = TagSet.Empty();
        for (Map.Entry<String, String> t : tags.entrySet()) {
            set = set.withTag(t.getKey(), t.getValue());
        }
        return set;
    }

    private static MeasurementUnit unit(Unit unit) {
        return switch (unit) {
            case NONE -> MeasurementUnit.none();
            case BYTES -> MeasurementUnit.information().bytes();
            case NANOSECONDS -> MeasurementUnit.time().nanoseconds();
        };
    }
}
