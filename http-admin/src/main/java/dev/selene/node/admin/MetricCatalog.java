package dev.selene.node.admin;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * How the node's named counters ({@code CacheCounters}: {@code publish.stored}, {@code abandoned.no_space}, ...)
 * become Prometheus counters (B19). Adding a metric is one line in {@link #RULES}; a rule that lists label
 * values makes those series exist at zero from the start.
 *
 * <p>Label values come from the counter names, which the actors build from bounded enums and labels
 * ({@code PublishResult.label}, {@code RetryReason}, {@code Tier}); a value outside {@link #LABEL_VALUE} is
 * never exported, so a bug cannot explode the series count.
 */
public final class MetricCatalog {

    /** Allowed label values: short lower-case words. */
    public static final Pattern LABEL_VALUE = Pattern.compile("[a-z0-9_]{1,40}");

    /**
     * One counter rule: an exact counter name, or a prefix whose remainder is the value of {@code label}.
     *
     * @param counter the counter name, or its prefix ending in '.'
     * @param metric  the Prometheus name without {@code _total}
     * @param help    the metric's description
     * @param label   the label the prefix's remainder fills, or null for an exact rule
     * @param tags    fixed labels
     * @param initial label values whose series exist from the start (prefix rules)
     */
    public record Rule(String counter, String metric, String help, String label, Map<String, String> tags,
                       List<String> initial) {
    }

    /** A counter name mapped to a metric and its labels. */
    public record Mapped(String metric, String help, Map<String, String> tags) {
    }

    /** The rules, first match wins (exact names before the prefixes that would also match them). */
    public static final List<Rule> RULES = List.of(
            exact("publish.bytes", "host_cache_transfer_bytes", "Bytes moved, by tier and direction",
                    "tier", "memory", "direction", "publish"),
            exact("restore.bytes", "host_cache_transfer_bytes", "Bytes moved, by tier and direction",
                    "tier", "memory", "direction", "restore"),
            exact("disk.write.bytes", "host_cache_transfer_bytes", "Bytes moved, by tier and direction",
                    "tier", "disk", "direction", "write"),
            exact("disk.read.bytes", "host_cache_transfer_bytes", "Bytes moved, by tier and direction",
                    "tier", "disk", "direction", "read"),
            byLabel("publish.", "host_cache_publications", "result", "Publications answered, by result",
                    "stored", "present", "retry_inflight", "retry_no_space", "oversize", "disabled", "failed"),
            byLabel("abandoned.", "host_cache_retry_abandoned", "reason",
                    "Publications the engine gave up while told to retry (B17), by reason", "no_space", "inflight"),
            byLabel("expired.", "host_cache_expired", "tier", "Records removed by max age (B18), by tier",
                    "memory", "disk"),
            byLabel("evicted.", "host_cache_evictions", "tier", "Records evicted to make room, by tier",
                    "memory", "disk"),
            exact("admin.evicted", "host_cache_admin_evictions", "Records removed by an operator (DELETE /records)"),
            exact("restore.memory", "host_cache_restores", "Restores by source and outcome",
                    "source", "memory", "outcome", "restored"),
            exact("restore.disk", "host_cache_restores", "Restores by source and outcome",
                    "source", "disk", "outcome", "restored"),
            exact("restore.refused", "host_cache_restores", "Restores by source and outcome",
                    "source", "disk", "outcome", "refused"),
            exact("restore.miss", "host_cache_restores", "Restores by source and outcome",
                    "source", "none", "outcome", "miss"),
            exact("restore.failed", "host_cache_restores", "Restores by source and outcome",
                    "source", "none", "outcome", "failed"),
            byLabel("restore.records.", "host_cache_restored_records", "tier", "Records restored, by tier",
                    "memory", "disk"),
            exact("lookup.total", "host_cache_lookups", "Lookups answered"),
            exact("lookup.hits", "host_cache_lookup_hits", "Lookups that matched a cached prefix"),
            exact("lookup.hit_tokens", "host_cache_lookup_hit_tokens", "Tokens covered by lookup matches"),
            exact("record.failures", "host_cache_record_failures", "Record actors that failed (B17)"),
            byLabel("spill.", "host_cache_spills", "outcome", "Spills to disk (B4, B11, B12), by outcome",
                    "written", "given_up", "dropped"),
            exact("disk.writes", "host_cache_disk_writes", "Record files written"),
            exact("disk.write.failures", "host_cache_write_failures", "Record writes that failed, by tier",
                    "tier", "disk"),
            exact("disk.read.failures", "host_cache_read_failures", "Record reads that failed, by tier",
                    "tier", "disk"),
            exact("disk.quarantined", "host_cache_disk_quarantined", "Record files that failed validation (B13)"),
            exact("disk.recovered", "host_cache_disk_recovered", "Records recovered from disk at start (B13)"),
            exact("disk.read.record_bytes", "host_cache_disk_record_bytes_read", "Record payload bytes read"),
            exact("disk.write.busy_nanos", "host_cache_disk_busy_nanoseconds",
                    "Time the disk had a transfer in flight; bandwidth = rate(bytes) / rate(busy)", "direction", "write"),
            exact("disk.read.busy_nanos", "host_cache_disk_busy_nanoseconds",
                    "Time the disk had a transfer in flight; bandwidth = rate(bytes) / rate(busy)", "direction", "read"),
            exact("disk.write.nanos", "host_cache_disk_io_nanoseconds", "Summed latency of disk transfers",
                    "direction", "write"),
            exact("disk.read.nanos", "host_cache_disk_io_nanoseconds", "Summed latency of disk transfers",
                    "direction", "read"));

    /**
     * Counters that hold a high-water mark rather than a count ({@code CacheCounters.max}): exported as gauges,
     * counter name to metric name.
     */
    public static final Map<String, String> HIGH_WATER_GAUGES = Map.of(
            "disk.write.max_in_flight", "host_cache_disk_writes_in_flight_max");

    private MetricCatalog() {
    }

    /** The metric of counter {@code name}, if a rule maps it to bounded labels. */
    public static Optional<Mapped> map(String name) {
        for (Rule r : RULES) {
            if (r.label() == null) {
                if (r.counter().equals(name)) {
                    return Optional.of(new Mapped(r.metric(), r.help(), r.tags()));
                }
            } else if (name.startsWith(r.counter())) {
                String value = name.substring(r.counter().length());
                if (!LABEL_VALUE.matcher(value).matches()) {
                    return Optional.empty();
                }
                Map<String, String> tags = new TreeMap<>(r.tags());
                tags.put(r.label(), value);
                return Optional.of(new Mapped(r.metric(), r.help(), Map.copyOf(tags)));
            }
        }
        return Optional.empty();
    }

    /** The counter names whose series exist from the start. */
    public static List<String> initialCounters() {
        return RULES.stream().flatMap(r -> r.label() == null ? java.util.stream.Stream.of(r.counter())
                : r.initial().stream().map(v -> r.counter() + v)).toList();
    }

    private static Rule exact(String counter, String metric, String help, String... tagPairs) {
        Map<String, String> tags = new TreeMap<>();
        for (int i = 0; i + 1 < tagPairs.length; i += 2) {
            tags.put(tagPairs[i], tagPairs[i + 1]);
        }
        return new Rule(counter, metric, help, null, Map.copyOf(tags), List.of());
    }

    private static Rule byLabel(String prefix, String metric, String label, String help, String... initial) {
        return new Rule(prefix, metric, help, label, Map.of(), List.of(initial));
    }
}
