package dev.selene.node.admin;

import dev.selene.actors.api.CacheStatus;
import kamon.Kamon;
import kamon.metric.Counter;
import kamon.metric.Gauge;
import kamon.tag.TagSet;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Feeds one node's status into Kamon (B19): gauges for slots and records, and the node's counters as Kamon
 * counters, adding what each counter grew by since the last update. Called by the status sampler; not
 * thread-safe (one sampler per node).
 */
public final class MetricsBridge {

    private final long slotBytes;
    private final Map<String, Long> exported = new HashMap<>();
    private final Set<String> unmapped = ConcurrentHashMap.newKeySet();

    private final Gauge slotsTotal = gauge("host_cache_slots_total", "Host slots in the pool (warm + intake)");
    private final Gauge slotsInUse = gauge("host_cache_slots_in_use", "Host slots holding records or copies");
    private final Gauge slotsFree = gauge("host_cache_slots_free", "Free host slots");
    private final Gauge slotsClean = gauge("host_cache_slots_clean", "Host slots of records that can be dropped at once");
    private final Gauge intake = gauge("host_cache_intake_slots", "Host slots kept free for GPU publications (B2)");
    private final Gauge inFlight = gauge("host_cache_publications_in_flight", "Publications being copied");
    private final Gauge residentDisk = Kamon.gauge("host_cache_records", "Records held, by tier")
            .withTag("tier", "disk");
    private final Gauge bytesDisk = Kamon.gauge("host_cache_tier_bytes",
            "Bytes of host slots in use by a tier (memory: records and copies in flight)").withTag("tier", "disk");
    private final Gauge diskQueue = gauge("host_cache_disk_queue_depth", "Record writes in flight on the disk tier");
    private final Gauge readEstimate = Kamon.gauge("host_cache_restore_estimate_bytes_per_second",
            "The restore cost estimator's current read bandwidth (B15), by tier").withTag("tier", "disk");
    private final Gauge enabled = gauge("host_cache_enabled", "1 when a tier is configured, else 0");
    private final Gauge residentMemory = Kamon.gauge("host_cache_records", "Records held, by tier")
            .withTag("tier", "memory");
    private final Gauge bytesMemory = Kamon.gauge("host_cache_tier_bytes",
            "Bytes of host slots in use by a tier (memory: records and copies in flight)").withTag("tier", "memory");

    /** A bridge for a node whose slots are {@code slotBytes} each; creates the zero series of every rule. */
    public MetricsBridge(long slotBytes) {
        PrometheusMetrics.start();
        this.slotBytes = slotBytes;
        for (String name : MetricCatalog.initialCounters()) {
            counter(name);
        }
    }

    /** Publishes {@code status} and the growth of its counters. */
    public void update(CacheStatus status) {
        enabled.update(status.enabled() ? 1 : 0);
        slotsTotal.update(status.totalSlots());
        intake.update(status.intakeSlots());
        if (status.freeSlots() >= 0) {
            slotsInUse.update(status.usedSlots());
            slotsFree.update(status.freeSlots());
            slotsClean.update(status.cleanSlots());
            inFlight.update(status.inFlight());
            residentMemory.update(status.residentRecords());
            bytesMemory.update((double) status.usedSlots() * slotBytes);
        }
        if (status.disk() != null) {
            residentDisk.update(status.disk().records());
            bytesDisk.update(status.disk().bytes());
            diskQueue.update(status.disk().writesInFlight());
            readEstimate.update(status.disk().readBytesPerSecond());
        }
        for (Map.Entry<String, Long> e : status.counters().entrySet()) {
            String gauge = MetricCatalog.HIGH_WATER_GAUGES.get(e.getKey());
            if (gauge != null) {
                Kamon.gauge(gauge, "High-water mark").withoutTags().update(e.getValue());
                continue;
            }
            long last = exported.getOrDefault(e.getKey(), 0L);
            long delta = e.getValue() - last;
            if (delta > 0) {
                Counter c = counter(e.getKey());
                if (c != null) {
                    c.increment(delta);
                }
                exported.put(e.getKey(), e.getValue());
            }
        }
    }

    /** Counter names seen that no rule maps (shown in /status, not exported). */
    public Set<String> unmapped() {
        return Set.copyOf(unmapped);
    }

    private Counter counter(String name) {
        return MetricCatalog.map(name).map(m -> Kamon.counter(m.metric(), m.help())
                .withTags(TagSet.from(new HashMap<String, Object>(m.tags())))).orElseGet(() -> {
                    unmapped.add(name);
                    return null;
                });
    }

    private static Gauge gauge(String name, String help) {
        return Kamon.gauge(name, help).withoutTags();
    }
}
