package dev.selene.actors.pool;

import kamon.Kamon;
import kamon.metric.Counter;
import kamon.metric.Gauge;
import kamon.metric.Histogram;
import kamon.metric.MeasurementUnit;
import kamon.metric.Metric;
import kamon.tag.TagSet;

import java.util.Locale;

/**
 * A pool manager's instruments (Kamon): records and bytes held, capacity, transfers in and out, refused uploads,
 * evictions, and expiries per namespace. Every series carries the {@code node} tag (the manager's cluster
 * address). Thread-safe.
 */
public final class PoolMetrics {

    /** A transfer's direction as the manager sees it. */
    public enum Direction {
        IN, OUT;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private static final MeasurementUnit BYTES = MeasurementUnit.information().bytes();
    private static final MeasurementUnit NANOS = MeasurementUnit.time().nanoseconds();

    private static final Metric.Gauge RECORDS = Kamon.gauge("selene_pool_records", "Records the manager holds");
    private static final Metric.Gauge HELD = Kamon.gauge("selene_pool_stored",
            "Bytes of the manager's slots that hold records", BYTES);
    private static final Metric.Gauge CAPACITY = Kamon.gauge("selene_pool_capacity",
            "Bytes of the manager's slots, the room for records", BYTES);
    private static final Metric.Counter TRANSFERS = Kamon.counter("selene_pool_transfers",
            "Record transfers completed, by direction (in: stored from a host or replica, out: served)");
    private static final Metric.Counter TRANSFERRED = Kamon.counter("selene_pool_transferred",
            "Bytes of record images moved, by direction", BYTES);
    private static final Metric.Histogram UPLOAD_LATENCY = Kamon.histogram("selene_pool_upload_latency",
            "Time from an offer's acceptance to a validated, held record", NANOS);
    private static final Metric.Counter REFUSED = Kamon.counter("selene_pool_refused",
            "Uploads refused or dropped (no room, wrong layout, the manager stopping, failed or invalid stream)");
    private static final Metric.Counter EVICTED = Kamon.counter("selene_pool_evicted",
            "Records dropped, least recently used first, to make room");
    private static final Metric.Counter EXPIRED = Kamon.counter("selene_pool_expired",
            "Records dropped because they were unused for longer than max age");

    private static final Metric.Counter TLS_REFUSED = Kamon.counter("selene_pool_tls_refused",
            "Connections a pool manager or host refused at the TLS handshake, by plane (cluster, data) and reason "
                    + "(no_certificate, untrusted, expired, not_tls, handshake)");

    private static final Metric.Counter ACCESS_REFUSED = Kamon.counter("selene_pool_access_refused",
            "Reads and writes refused because no namespace rule lets the host's certificate touch the namespace, "
                    + "by operation (read, write)");

    private final TagSet tags;
    private final Gauge records;
    private final Gauge held;
    private final Counter refused;
    private final Counter evicted;
    /** One series for every namespace: a namespace is any name a host picks, too many to be a label. */
    private final Counter expired;
    /** Per direction, resolved once: a transfer is counted without looking its series up. */
    private final Counter[] transfers = new Counter[Direction.values().length];
    private final Counter[] transferred = new Counter[Direction.values().length];
    private final Histogram uploadLatency;

    /** The instruments of the manager at {@code node}. */
    public PoolMetrics(String node) {
        this.tags = TagSet.of("node", node);
        this.records = RECORDS.withTags(tags);
        this.held = HELD.withTags(tags);
        this.refused = REFUSED.withTags(tags);
        this.evicted = EVICTED.withTags(tags);
        this.expired = EXPIRED.withTags(tags);
        for (Direction d : Direction.values()) {
            transfers[d.ordinal()] = TRANSFERS.withTags(tags.withTag("direction", d.label()));
            transferred[d.ordinal()] = TRANSFERRED.withTags(tags.withTag("direction", d.label()));
        }
        this.uploadLatency = UPLOAD_LATENCY.withTags(tags);
    }

    /** Counts the refusals of {@code tls} from now on (its series exist at zero from this call). */
    void countRefusals(dev.selene.transport.tls.PoolTls tls) {
        countTlsRefusals(tags, tls);
        for (String op : new String[]{"read", "write"}) {
            ACCESS_REFUSED.withTags(tags.withTag("operation", op));
        }
    }

    /**
     * Counts the TLS refusals of the pool host at {@code node} (its cluster address) from now on, under the same
     * metric as a manager's: a host refuses a peer on the cluster plane (one connecting to its cluster port) and on
     * the data plane (a manager whose certificate does not check out).
     */
    static void countHostRefusals(String node, dev.selene.transport.tls.PoolTls tls) {
        countTlsRefusals(TagSet.of("node", node), tls);
    }

    private static void countTlsRefusals(TagSet tags, dev.selene.transport.tls.PoolTls tls) {
        for (var plane : dev.selene.transport.tls.PoolTls.Plane.values()) {
            for (var reason : dev.selene.transport.tls.PoolTls.Reason.values()) {
                TLS_REFUSED.withTags(tags.withTag("plane", plane.label()).withTag("reason", reason.label()));
            }
        }
        tls.onRefusal(r -> TLS_REFUSED.withTags(tags.withTag("plane", r.plane().label())
                .withTag("reason", r.reason().label())).increment());
    }

    void accessRefused(String operation) {
        ACCESS_REFUSED.withTags(tags.withTag("operation", operation)).increment();
    }

    void capacity(long bytes) {
        CAPACITY.withTags(tags).update(bytes);
    }

    void held(long count, long bytes) {
        records.update(count);
        held.update(bytes);
    }

    void transfer(Direction direction, long bytes, long nanos) {
        transfers[direction.ordinal()].increment();
        transferred[direction.ordinal()].increment(bytes);
        if (direction == Direction.IN && nanos > 0) {
            uploadLatency.record(nanos);
        }
    }

    void refused() {
        refused.increment();
    }

    void evicted() {
        evicted.increment();
    }

    void expired() {
        expired.increment();
    }
}
