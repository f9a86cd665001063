package dev.selene.actors.metrics;

import dev.selene.actors.value.AbandonReason;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RetryReason;
import dev.selene.actors.value.Tier;
import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.actors.metrics.MetricsBackend.Counter;
import dev.selene.actors.metrics.MetricsBackend.Gauge;
import dev.selene.actors.metrics.MetricsBackend.Histogram;
import dev.selene.actors.metrics.MetricsBackend.Unit;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * One node's instruments: every metric the node records, declared once with its type, unit and bounded tags, and a
 * typed method per event that the actors call where the event happens. Each method records into the installed
 * {@link MetricsBackend} (Kamon's registry with {@code selene-metrics-kamon} on the class path, else nowhere) and into
 * the node's {@link CacheCounters} (the in-process snapshot that {@code /status}, the status page and the reports
 * read), so the counter names live here and nowhere else. Thread-safe: the actors record from their own threads.
 *
 * <p>The library records into the backend only; exporting is the application's choice (the node serves Kamon's
 * Prometheus reporter at {@code /metrics}). With no reporter started nothing leaves the process. The
 * catalogue of names, types, units and tags is {@code docs/metrics.md}; a test scrapes a node and holds the two
 * together.
 */
public final class CacheMetrics implements AutoCloseable {

    /*
     * Names. Kamon's Prometheus reporter appends the base unit of a time or information instrument (seconds,
     * bytes: it converts the nanoseconds recorded here) and "_total" to counters, so the names below carry neither.
     *
     * Tags. Every instrument carries "node": a JVM may run several nodes (an application with two systems, and
     * every test run), and a gauge shared by two nodes would show whichever wrote last. The tag is the actor
     * system's name (plus the node actor's name when the node is not the system's guardian), and a node that
     * starts while another of the same name lives gets "_2", "_3", ...; the name is freed when the node stops, so a
     * node restarted in the same JVM continues its series, provided it has the same tiers: a node with other tiers
     * takes the next suffix instead, so a memory-only node never shows the disk series a former namesake left.
     * Every other tag takes its values from an enum here, and every series exists, at zero, from the node's start,
     * so an alert on a rate works on a fresh node.
     *
     * Tiers. A node exports the series of the tiers it has: a memory-only node no disk or pool series, a disk node
     * no pool series (a "tier" or "source" tag of a missing tier included). The instruments of a missing tier are
     * null here, and recording into them does nothing; the in-process counters still count, for /status.
     */

    private static final Unit NANOS = Unit.NANOSECONDS;
    private static final Unit BYTES = Unit.BYTES;

    private static final Family<Gauge> ENABLED = Family.gauge("selene_enabled",
            "1 when a tier is configured, 0 when the cache is disabled");
    private static final Family<Gauge> SLOTS_CAPACITY = Family.gauge("selene_slots_capacity",
            "Host slots in the pool, warm and intake");
    private static final Family<Gauge> SLOTS_IN_USE = Family.gauge("selene_slots_in_use",
            "Host slots holding records, copies in flight or restores being staged");
    private static final Family<Gauge> SLOTS_FREE = Family.gauge("selene_slots_free", "Free host slots");
    private static final Family<Gauge> SLOTS_CLEAN = Family.gauge("selene_slots_clean",
            "Host slots of records that can be dropped at once: clean ones (a durable copy on disk or in the "
                    + "pool) and, on a node without a durable tier, the records eviction drops as they are");
    private static final Family<Gauge> INTAKE_SLOTS = Family.gauge("selene_intake_slots",
            "Host slots the intake keeps free for publications");
    private static final Family<Gauge> IN_FLIGHT = Family.gauge("selene_publications_in_flight",
            "Publications admitted and not yet resident");
    private static final Family<Gauge> RECORDS = Family.gauge("selene_records", "Records held, by tier");
    private static final Family<Gauge> DISK_USED = Family.gauge("selene_disk_used",
            "Size of the committed record files on the disk tier", BYTES);
    private static final Family<Gauge> DISK_CAPACITY = Family.gauge("selene_disk_capacity",
            "Size the disk tier may fill", BYTES);
    private static final Family<Gauge> DISK_QUEUE = Family.gauge("selene_disk_queue_depth",
            "Record writes in flight on the disk tier");
    private static final Family<Gauge> DISK_QUEUE_MAX = Family.gauge("selene_disk_writes_in_flight_max",
            "The most record writes in flight at once since the node started");
    private static final Family<Gauge> READ_ESTIMATE = Family.gauge("selene_disk_read_estimate_bytes_per_second",
            "Disk read bandwidth the restore cost estimate assumes, as of the last disk read or restore decision");

    private static final Family<Counter> PUBLICATIONS = Family.counter("selene_publications",
            "Publications answered, by result");
    private static final Family<Counter> ABANDONED = Family.counter("selene_retry_abandoned",
            "Publications lost between the GPU and host memory, by reason");
    private static final Family<Counter> RECORD_FAILURES = Family.counter("selene_record_actor_failures",
            "Record actors that failed; their slots were released");
    private static final Family<Counter> EVICTIONS = Family.counter("selene_evictions",
            "Records evicted to make room, by tier");
    private static final Family<Counter> ROWS_DROPPED = Family.counter("selene_rows_dropped",
            "Rows dropped from memory to make room while their record's pages stay for the records under it"
                    + " (memory-only nodes)");
    private static final Family<Counter> EXPIRED = Family.counter("selene_expired",
            "Records removed because they were unused for longer than the max age, by tier");
    private static final Family<Counter> OPERATOR_EVICTIONS = Family.counter("selene_operator_evictions",
            "Records removed by an operator, descendants included");
    private static final Family<Counter> LOOKUPS = Family.counter("selene_lookups", "Lookups answered");
    private static final Family<Counter> LOOKUP_HITS = Family.counter("selene_lookup_hits",
            "Lookups that matched a cached prefix");
    private static final Family<Counter> LOOKUP_HIT_TOKENS = Family.counter("selene_lookup_hit_tokens",
            "Tokens covered by the prefixes lookups matched");
    private static final Family<Counter> RESTORES = Family.counter("selene_restores",
            "Restores answered, by where the records came from and outcome");
    private static final Family<Counter> RESTORE_REQUESTED_TOKENS = Family.counter("selene_restore_requested_tokens",
            "Tokens restores asked for: every record of each restore's chain");
    private static final Family<Counter> RESTORE_HIT_TOKENS = Family.counter("selene_restore_hit_tokens",
            "Tokens restores copied back to the device");
    private static final Family<Counter> RESTORED_RECORDS = Family.counter("selene_restored_records",
            "Records copied back to the device, by the tier they came from");
    private static final Family<Counter> PROMOTIONS = Family.counter("selene_restore_promotions",
            "Records read from disk for a restore that stay resident in memory afterwards");
    private static final Family<Counter> TRANSFER = Family.counter("selene_transfer",
            "Bytes moved, by tier and direction", BYTES);
    private static final Family<Counter> SPILLS = Family.counter("selene_spills",
            "Spills to disk that ended, by outcome");
    private static final Family<Counter> SPILL_DROPPED = Family.counter("selene_spill_dropped_records",
            "Records dropped from memory because they can never be written to disk, by reason");
    private static final Family<Counter> DISK_WRITES = Family.counter("selene_disk_writes",
            "Record files written and committed");
    private static final Family<Counter> DISK_WRITE_FAILURES = Family.counter("selene_disk_write_failures",
            "Record file writes that failed");
    private static final Family<Counter> DISK_READ_FAILURES = Family.counter("selene_disk_read_failures",
            "Record file reads that failed");
    private static final Family<Counter> DISK_FULL = Family.counter("selene_disk_full",
            "Writes that found the disk full before the disk tier's size was reached; each lowers the size to what "
                    + "the disk held");
    private static final Family<Counter> DISK_QUARANTINED = Family.counter("selene_disk_quarantined",
            "Record files moved aside because they failed validation");
    private static final Family<Counter> DISK_RECOVERED = Family.counter("selene_disk_recovered",
            "Records found on disk when the disk tier started");
    private static final Family<Counter> DISK_BUSY = Family.counter("selene_disk_busy",
            "Time the disk had at least one transfer in flight, by direction", NANOS);

    private static final Family<Counter> POOL_RETIREMENTS = Family.counter("selene_pool_retirements",
            "Records retired to the shared pool, by outcome: retired (held by a manager at least), failed, "
                    + "under_replicated (retired to fewer managers than the replica count; also counted retired)");
    private static final Family<Counter> POOL_READ_FAILURES = Family.counter("selene_pool_read_failures",
            "Records that could not be fetched from the shared pool");
    private static final Family<Counter> POOL_BUSY = Family.counter("selene_pool_busy",
            "Time this node had at least one transfer to or from the shared pool in flight, by direction", NANOS);
    private static final Family<Gauge> POOL_READ_ESTIMATE = Family.gauge(
            "selene_pool_read_estimate_bytes_per_second",
            "Shared pool read bandwidth the restore cost estimate assumes, as of the last pool read or restore "
                    + "decision");
    private static final Family<Histogram> POOL_RETIRE_LATENCY = Family.histogram("selene_pool_retire_latency",
            "Time to retire one record to the shared pool, until every manager it was placed on answered", NANOS);

    private static final Family<Histogram> PUBLISH_LATENCY = Family.histogram("selene_publish_latency",
            "Time from a publication's slots being granted to its record resident in host memory (a wait for slots "
                    + "is not in it)", NANOS);
    private static final Family<Histogram> DISK_WRITE_LATENCY = Family.histogram("selene_disk_write_latency",
            "Time to write and commit one record file", NANOS);
    private static final Family<Histogram> DISK_READ_LATENCY = Family.histogram("selene_disk_read_latency",
            "Time to read and verify one record file", NANOS);
    private static final Family<Histogram> RESTORE_LATENCY = Family.histogram("selene_restore_latency",
            "Time from a restore's start to its records on the device, by where they came from", NANOS);

    /** The node tags of the nodes alive in this JVM. */
    private static final Set<String> NODES_IN_USE = new HashSet<>();

    /** The tiers of every node tag this JVM has used: a tag is taken again only by a node of the same tiers. */
    private static final Map<String, Set<Tier>> TAG_TIERS = new HashMap<>();

    /** The answers a publication can get: the result tag. */
    private enum Result {
        STORED, PRESENT, RETRY_INFLIGHT, RETRY_NO_SPACE, OVERSIZE, DISABLED, ABANDONED, FAILED;

        static Result of(PublishResult r) {
            return switch (r) {
                case PublishResult.Stored s -> STORED;
                case PublishResult.Present p -> PRESENT;
                case PublishResult.Retry t -> t.reason() == RetryReason.INFLIGHT ? RETRY_INFLIGHT : RETRY_NO_SPACE;
                case PublishResult.Oversize o -> OVERSIZE;
                case PublishResult.Disabled d -> DISABLED;
                case PublishResult.Abandoned a -> ABANDONED;
                case PublishResult.Failed f -> FAILED;
            };
        }

        /** Its counter's name, built once. */
        final String counter = "publish." + label();

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** How a restore ended: the source and outcome tags, its counter, and the tier it needs (null: none). */
    private enum RestoreEnd {
        MEMORY("memory", "restored", "restore.memory", Tier.MEMORY),
        DISK("disk", "restored", "restore.disk", Tier.DISK),
        POOL("pool", "restored", "restore.pool", Tier.POOL),
        REFUSED_DISK("disk", "refused", "restore.refused", Tier.DISK),
        REFUSED_POOL("pool", "refused", "restore.refused", Tier.POOL),
        MISS("none", "miss", "restore.miss", null),
        FAILED("none", "failed", "restore.failed", null),
        DISABLED("none", "disabled", "restore.disabled", null);

        final String source;
        final String outcome;
        final String counter;
        final Tier tier;

        RestoreEnd(String source, String outcome, String counter, Tier tier) {
            this.source = source;
            this.outcome = outcome;
            this.counter = counter;
            this.tier = tier;
        }
    }

    /** Which way a disk transfer goes: the direction tag. */
    public enum Direction {
        WRITE, READ;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Why records were dropped because they can never be written: the reason tag. */
    private enum Unwritable {
        /** Its file, or an ancestor's, failed to be written. */
        WRITE_FAILED("spill.dropped"),
        /** Its chain hangs from an ancestor that is in no tier. */
        ORPHANED("spill.orphans");

        final String counter;

        Unwritable(String counter) {
            this.counter = counter;
        }

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final String node;
    private final CacheCounters counters;
    private final Set<Tier> tiers;
    private final List<Gauge> gauges = new ArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private final Gauge enabled;
    private final Gauge slotsCapacity;
    private final Gauge slotsInUse;
    private final Gauge slotsFree;
    private final Gauge slotsClean;
    private final Gauge intakeSlots;
    private final Gauge inFlight;
    private final Map<Tier, Gauge> records;
    private final Gauge diskUsed;
    private final Gauge diskCapacity;
    private final Gauge diskQueue;
    private final Gauge diskQueueMax;
    private final Gauge readEstimate;
    private final Gauge poolReadEstimate;
    private final Map<Result, Counter> publications;
    private final Map<AbandonReason, Counter> abandoned;
    private final Counter recordFailures;
    private final Map<Tier, Counter> evictions;
    private final Counter rowsDropped;
    private final Map<Tier, Counter> expired;
    private final Counter operatorEvictions;
    private final Counter lookups;
    private final Counter lookupHits;
    private final Counter lookupHitTokens;
    private final Map<RestoreEnd, Counter> restores;
    private final Counter restoreRequestedTokens;
    private final Counter restoreHitTokens;
    private final Map<Tier, Counter> restoredRecords;
    private final Counter promotions;
    private final Counter publishedBytes;
    private final Counter restoredBytes;
    private final Counter writtenBytes;
    private final Counter readBytes;
    private final Counter spillsWritten;
    private final Counter spillsGivenUp;
    private final Map<Unwritable, Counter> unwritable;
    private final Counter diskWrites;
    private final Counter diskWriteFailures;
    private final Counter diskReadFailures;
    private final Counter diskQuarantined;
    private final Counter diskFull;
    private final Counter diskRecovered;
    private final Map<Direction, Counter> diskBusy;
    private final Histogram publishLatency;
    private final Histogram diskWriteLatency;
    private final Histogram diskReadLatency;
    private final Map<Tier, Histogram> restoreLatency;
    private final Counter poolRetired;
    private final Counter poolRetireFailed;
    private final Counter poolUnderReplicated;
    private final Counter poolReadFailures;
    private final Counter poolWrittenBytes;
    private final Counter poolReadBytes;
    private final Map<Direction, Counter> poolBusy;
    private final Histogram poolRetireLatency;

    private CacheMetrics(String node, CacheCounters counters, Set<Tier> tiers) {
        this.node = node;
        this.counters = counters;
        this.tiers = tiers;
        boolean disk = this.tiers.contains(Tier.DISK);
        boolean pool = this.tiers.contains(Tier.POOL);
        boolean durable = disk || pool;
        Tags tags = Tags.of("node", node);
        enabled = gauge(ENABLED.withTags(tags));
        slotsCapacity = gauge(SLOTS_CAPACITY.withTags(tags));
        slotsInUse = gauge(SLOTS_IN_USE.withTags(tags));
        slotsFree = gauge(SLOTS_FREE.withTags(tags));
        slotsClean = gauge(SLOTS_CLEAN.withTags(tags));
        intakeSlots = gauge(INTAKE_SLOTS.withTags(tags));
        inFlight = gauge(IN_FLIGHT.withTags(tags));
        // The catalog accounts for memory and its durable tier. A pool written besides a disk is not accounted for
        // (the managers count what it holds), so such a node has no pool series of what the catalog counts.
        Set<Tier> accounted = disk && pool ? EnumSet.of(Tier.MEMORY, Tier.DISK) : this.tiers;
        records = byTier(accounted, t -> gauge(RECORDS.withTags(tags.withTag("tier", t.label()))));
        diskUsed = disk ? gauge(DISK_USED.withTags(tags)) : null;
        diskCapacity = disk ? gauge(DISK_CAPACITY.withTags(tags)) : null;
        diskQueue = disk ? gauge(DISK_QUEUE.withTags(tags)) : null;
        diskQueueMax = disk ? gauge(DISK_QUEUE_MAX.withTags(tags)) : null;
        readEstimate = disk ? gauge(READ_ESTIMATE.withTags(tags)) : null;
        poolReadEstimate = pool ? gauge(POOL_READ_ESTIMATE.withTags(tags)) : null;
        publications = byEnum(Result.class, r -> PUBLICATIONS.withTags(tags.withTag("result", r.label())));
        abandoned = byEnum(AbandonReason.class, r -> ABANDONED.withTags(tags.withTag("reason", r.label())));
        recordFailures = RECORD_FAILURES.withTags(tags);
        evictions = byTier(accounted, t -> EVICTIONS.withTags(tags.withTag("tier", t.label())));
        rowsDropped = ROWS_DROPPED.withTags(tags);
        expired = byTier(accounted, t -> EXPIRED.withTags(tags.withTag("tier", t.label())));
        operatorEvictions = OPERATOR_EVICTIONS.withTags(tags);
        lookups = LOOKUPS.withTags(tags);
        lookupHits = LOOKUP_HITS.withTags(tags);
        lookupHitTokens = LOOKUP_HIT_TOKENS.withTags(tags);
        restores = new EnumMap<>(RestoreEnd.class);
        for (RestoreEnd e : RestoreEnd.values()) {
            if (e.tier == null || this.tiers.contains(e.tier)) {
                restores.put(e, RESTORES.withTags(tags.withTag("source", e.source).withTag("outcome", e.outcome)));
            }
        }
        restoreRequestedTokens = RESTORE_REQUESTED_TOKENS.withTags(tags);
        restoreHitTokens = RESTORE_HIT_TOKENS.withTags(tags);
        restoredRecords = byTier(t -> RESTORED_RECORDS.withTags(tags.withTag("tier", t.label())));
        promotions = durable ? PROMOTIONS.withTags(tags) : null;
        publishedBytes = TRANSFER.withTags(tags.withTag("tier", "memory").withTag("direction", "publish"));
        restoredBytes = TRANSFER.withTags(tags.withTag("tier", "memory").withTag("direction", "restore"));
        writtenBytes = disk ? TRANSFER.withTags(tags.withTag("tier", "disk").withTag("direction", "write")) : null;
        readBytes = disk ? TRANSFER.withTags(tags.withTag("tier", "disk").withTag("direction", "read")) : null;
        spillsWritten = durable ? SPILLS.withTags(tags.withTag("outcome", "written")) : null;
        spillsGivenUp = durable ? SPILLS.withTags(tags.withTag("outcome", "given_up")) : null;
        unwritable = durable
                ? byEnum(Unwritable.class, u -> SPILL_DROPPED.withTags(tags.withTag("reason", u.label())))
                : Map.of();
        diskWrites = disk ? DISK_WRITES.withTags(tags) : null;
        diskWriteFailures = disk ? DISK_WRITE_FAILURES.withTags(tags) : null;
        diskReadFailures = disk ? DISK_READ_FAILURES.withTags(tags) : null;
        diskQuarantined = disk ? DISK_QUARANTINED.withTags(tags) : null;
        diskFull = disk ? DISK_FULL.withTags(tags) : null;
        diskRecovered = disk ? DISK_RECOVERED.withTags(tags) : null;
        diskBusy = disk
                ? byEnum(Direction.class, d -> DISK_BUSY.withTags(tags.withTag("direction", d.label())))
                : Map.of();
        publishLatency = PUBLISH_LATENCY.withTags(tags);
        diskWriteLatency = disk ? DISK_WRITE_LATENCY.withTags(tags) : null;
        diskReadLatency = disk ? DISK_READ_LATENCY.withTags(tags) : null;
        restoreLatency = byTier(t -> RESTORE_LATENCY.withTags(tags.withTag("source", t.label())));
        poolRetired = pool ? POOL_RETIREMENTS.withTags(tags.withTag("outcome", "retired")) : null;
        poolRetireFailed = pool ? POOL_RETIREMENTS.withTags(tags.withTag("outcome", "failed")) : null;
        poolUnderReplicated = pool ? POOL_RETIREMENTS.withTags(tags.withTag("outcome", "under_replicated")) : null;
        poolReadFailures = pool ? POOL_READ_FAILURES.withTags(tags) : null;
        poolWrittenBytes = pool ? TRANSFER.withTags(tags.withTag("tier", "pool").withTag("direction", "write")) : null;
        poolReadBytes = pool ? TRANSFER.withTags(tags.withTag("tier", "pool").withTag("direction", "read")) : null;
        poolBusy = pool
                ? byEnum(Direction.class, d -> POOL_BUSY.withTags(tags.withTag("direction", d.label())))
                : Map.of();
        poolRetireLatency = pool ? POOL_RETIRE_LATENCY.withTags(tags) : null;
    }

    /**
     * The instruments of a node named {@code name} with every tier, as a test of one part wants them; see
     * {@link #forNode(String, CacheCounters, Set)}.
     */
    public static CacheMetrics forNode(String name, CacheCounters counters) {
        return forNode(name, counters, EnumSet.allOf(Tier.class));
    }

    /**
     * The instruments of a node named {@code name} (reduced to {@code [a-z0-9_]}) with the tiers {@code tiers}
     * (memory always), counting into {@code counters}; {@link #close()} them when the node stops.
     */
    public static CacheMetrics forNode(String name, CacheCounters counters, Set<Tier> tiers) {
        String base = tagValue(name);
        Set<Tier> own = EnumSet.of(Tier.MEMORY);
        own.addAll(tiers);
        synchronized (NODES_IN_USE) {
            String tag = base;
            for (int n = 2; NODES_IN_USE.contains(tag) || !TAG_TIERS.getOrDefault(tag, own).equals(own); n++) {
                tag = base + "_" + n;
            }
            NODES_IN_USE.add(tag);
            TAG_TIERS.put(tag, own);
            return new CacheMetrics(tag, counters, own);
        }
    }

    /** {@code name} lower-cased with every character outside {@code [a-z0-9_]} replaced by '_'. */
    static String tagValue(String name) {
        String v = name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
        return v.isEmpty() ? "node" : v;
    }

    /** The value of this node's {@code node} tag. */
    public String node() {
        return node;
    }

    /** The in-process counters these instruments also count into. */
    public CacheCounters counters() {
        return counters;
    }

    // ---- publications ----

    /** A publication was answered {@code result}. */
    public void publication(PublishResult result) {
        Result r = Result.of(result);
        counters.increment(r.counter);
        publications.get(r).increment();
        if (result instanceof PublishResult.Stored s) {
            counters.add("publish.bytes", s.bytes());
            publishedBytes.increment(s.bytes());
        }
    }

    /** A publication's record became resident {@code nanos} after its record actor started. */
    public void publishLatency(long nanos) {
        publishLatency.record(Math.max(0, nanos));
    }

    /** A publication was lost for {@code reason}. */
    public void abandoned(AbandonReason reason) {
        counters.increment("abandoned." + reason.label());
        abandoned.get(reason).increment();
    }

    /** A record actor failed. */
    public void recordActorFailed() {
        counters.increment("record.failures");
        recordFailures.increment();
    }

    // ---- memory ----

    /** The cache is on (a tier is configured) or off. */
    public void enabled(boolean on) {
        enabled.update(on ? 1 : 0);
    }

    /** The host slots' figures now (set by the catalog, which keeps them). */
    public void slots(int total, int intake, int free, int clean) {
        slotsCapacity.update(total);
        intakeSlots.update(intake);
        slotsFree.update(free);
        slotsInUse.update(total - free);
        slotsClean.update(clean);
    }

    /**
     * The catalog's figures now; its durable records are on {@code durable} (the disk, or the pool on a node
     * without a disk).
     */
    public void catalog(RecordCatalog c, Tier durable) {
        inFlight.update(c.inFlightRecords());
        records.get(Tier.MEMORY).update(c.residentRecords());
        int durableRecords = c.durableRecords();
        set(records.get(Tier.DISK), durable == Tier.DISK ? durableRecords : 0);
        set(records.get(Tier.POOL), durable == Tier.POOL ? durableRecords : 0);
        set(diskUsed, c.durableBytes());
        set(diskQueue, c.writesInFlight());
    }

    /** {@code n} records were evicted from {@code tier} to make room. */
    public void evicted(Tier tier, int n) {
        counters.add("evicted." + tier.label(), n);
        add(evictions.get(tier), n);
    }

    /** {@code n} records lost their row to make room; their pages stayed. */
    public void rowsDropped(int n) {
        counters.add("rows.dropped", n);
        add(rowsDropped, n);
    }

    /** A row was published at a record held without one and joined its pages (a counter only, no metric). */
    public void rowAdded() {
        counters.add("rows.added", 1);
    }

    /** {@code n} records of {@code tier} expired. */
    public void expired(Tier tier, int n) {
        counters.add("expired." + tier.label(), n);
        add(expired.get(tier), n);
    }

    /** An operator removed {@code n} records. */
    public void evictedByOperator(int n) {
        counters.add("admin.evicted", n);
        operatorEvictions.increment(n);
    }

    // ---- lookups and restores ----

    /** A lookup was answered: a hit covering {@code tokens}, or a miss. */
    public void lookup(boolean hit, long tokens) {
        counters.increment("lookup.total");
        lookups.increment();
        if (hit) {
            counters.increment("lookup.hits");
            counters.add("lookup.hit_tokens", tokens);
            lookupHits.increment();
            lookupHitTokens.increment(tokens);
        }
    }

    /** A restore asked for a chain of {@code tokens}: the denominator of the restore hit ratio. */
    public void restoreRequested(long tokens) {
        counters.add("restore.requested_tokens", tokens);
        restoreRequestedTokens.increment(tokens);
    }

    /** A restore found nothing cached. */
    public void restoreMissed() {
        restoreEnded(RestoreEnd.MISS);
    }

    /**
     * A restore refused as slower than recomputing; {@code byPool} when its pool reads took the larger part of the
     * estimate (else its disk reads did).
     */
    public void restoreRefused(boolean byPool) {
        restoreEnded(byPool ? RestoreEnd.REFUSED_POOL : RestoreEnd.REFUSED_DISK);
    }

    /** A restore failed and restored nothing. */
    public void restoreFailed() {
        restoreEnded(RestoreEnd.FAILED);
    }

    /** A restore was asked of a disabled cache. */
    public void restoreDisabled() {
        restoreEnded(RestoreEnd.DISABLED);
    }

    /**
     * A restore copied {@code fromMemory} records from memory, {@code fromDisk} from disk and {@code fromPool}
     * from the pool to the device, {@code tokens} tokens and {@code bytes} bytes in all, {@code nanos} after it
     * started. Its source is the slowest tier it read from.
     */
    public void restored(int fromMemory, int fromDisk, int fromPool, long tokens, long bytes, long nanos) {
        RestoreEnd end = fromPool > 0 ? RestoreEnd.POOL : fromDisk > 0 ? RestoreEnd.DISK : RestoreEnd.MEMORY;
        restoreEnded(end);
        counters.add("restore.hit_tokens", tokens);
        restoreHitTokens.increment(tokens);
        counters.add("restore.bytes", bytes);
        counters.add("restore.records.memory", fromMemory);
        counters.add("restore.records.disk", fromDisk);
        counters.add("restore.records.pool", fromPool);
        restoredBytes.increment(bytes);
        add(restoredRecords.get(Tier.MEMORY), fromMemory);
        add(restoredRecords.get(Tier.DISK), fromDisk);
        add(restoredRecords.get(Tier.POOL), fromPool);
        record(restoreLatency.get(end.tier), nanos);
    }

    /** A record read from disk for a restore stays resident. */
    public void promoted() {
        counters.increment("restore.promoted");
        add(promotions, 1);
    }

    /** One wave of a restore's disk reads moved {@code bytes} in {@code nanos}. */
    public void readSample(long bytes, long nanos) {
        counters.add("disk.read.bytes", bytes);
        counters.add("disk.read.nanos", nanos);
    }

    /** The restore cost estimator's disk read bandwidth now. */
    public void readEstimate(double bytesPerSecond) {
        set(readEstimate, bytesPerSecond);
    }

    /** The restore cost estimator's pool read bandwidth now. */
    public void poolReadEstimate(double bytesPerSecond) {
        set(poolReadEstimate, bytesPerSecond);
    }

    // ---- spills ----

    /** A spill was started; {@code writesInFlight} are in flight now, this one included. */
    public void spillStarted(int writesInFlight) {
        // Spills go to the disk, or to the pool on a node without one.
        String most = tiers.contains(Tier.DISK) ? "disk.write.max_in_flight" : "pool.write.max_in_flight";
        counters.max(most, writesInFlight);
        set(diskQueueMax, counters.get(most));
    }

    /** A spilled record's file committed. */
    public void spillCommitted() {
        counters.increment("spill.written");
        add(spillsWritten, 1);
    }

    /** A spill was given up. */
    public void spillGivenUp() {
        counters.increment("spill.given_up");
        add(spillsGivenUp, 1);
    }

    /** {@code n} records were dropped because their file, or an ancestor's, could not be written. */
    public void droppedUnwritable(int n) {
        unwritable(Unwritable.WRITE_FAILED, n);
    }

    /** {@code n} records were dropped because their chain hangs from an ancestor in no tier. */
    public void droppedOrphans(int n) {
        unwritable(Unwritable.ORPHANED, n);
    }

    // ---- disk ----

    /** The disk tier's size. */
    public void diskCapacity(long bytes) {
        set(diskCapacity, bytes);
    }

    /** A record file of {@code bytes} was written and committed in {@code nanos}. */
    public void diskWritten(long bytes, long nanos) {
        counters.increment("disk.writes");
        counters.add("disk.write.bytes", bytes);
        counters.add("disk.write.nanos", nanos);
        add(diskWrites, 1);
        add(writtenBytes, bytes);
        record(diskWriteLatency, nanos);
    }

    /** A write found the disk full; the disk tier's size is now {@code capacityBytes}. */
    public void diskFull(long capacityBytes) {
        counters.increment("disk.full");
        add(diskFull, 1);
        set(diskCapacity, capacityBytes);
    }

    /** A record file write failed. */
    public void diskWriteFailed() {
        counters.increment("disk.write.failures");
        add(diskWriteFailures, 1);
    }

    /** A record file of {@code bytes} was read and verified in {@code nanos}. */
    public void diskRead(long bytes, long nanos) {
        counters.add("disk.read.record_bytes", bytes);
        counters.add("disk.read.record_nanos", nanos);
        add(readBytes, bytes);
        record(diskReadLatency, nanos);
    }

    /** A record file read failed. */
    public void diskReadFailed() {
        counters.increment("disk.read.failures");
        add(diskReadFailures, 1);
    }

    // ---- pool ----

    /** A record of {@code bytes} was retired to the pool (at least one manager stored it) in {@code nanos}. */
    public void poolRetired(long bytes, long nanos) {
        counters.increment("pool.retired");
        counters.add("pool.write.bytes", bytes);
        counters.add("pool.write.nanos", nanos);
        add(poolRetired, 1);
        add(poolWrittenBytes, bytes);
        record(poolRetireLatency, nanos);
    }

    /**
     * A record was retired to fewer managers than the pool's replica count (a manager was unreachable or failed);
     * counted beside its retirement.
     */
    public void poolUnderReplicated() {
        counters.increment("pool.under_replicated");
        add(poolUnderReplicated, 1);
    }

    /** Retiring a record to the pool failed. */
    public void poolRetireFailed() {
        counters.increment("pool.retire.failures");
        add(poolRetireFailed, 1);
    }

    /** A record of {@code bytes} was fetched from the pool and verified in {@code nanos}. */
    public void poolRead(long bytes, long nanos) {
        counters.add("pool.read.bytes", bytes);
        counters.add("pool.read.nanos", nanos);
        add(poolReadBytes, bytes);
    }

    /**
     * The pool had retirements ({@code WRITE}) or fetches ({@code READ}) on its data plane in flight for
     * {@code nanos} without a break: the time its throughput is measured over, as the disk tier's is.
     */
    public void poolBusy(Direction direction, long nanos) {
        counters.add("pool." + direction.label() + ".busy_nanos", Math.max(0, nanos));
        add(poolBusy.get(direction), Math.max(0, nanos));
    }

    /** A record could not be fetched from the pool. */
    public void poolReadFailed() {
        counters.increment("pool.read.failures");
        add(poolReadFailures, 1);
    }

    /** The disk had transfers in {@code direction} in flight for {@code nanos} without a break. */
    public void diskBusy(Direction direction, long nanos) {
        counters.add("disk." + direction.label() + ".busy_nanos", nanos);
        add(diskBusy.get(direction), Math.max(0, nanos));
    }

    /** The disk tier's scan found {@code recovered} records and quarantined {@code quarantined} files. */
    public void diskScanned(int recovered, int quarantined) {
        counters.add("disk.recovered", recovered);
        counters.add("disk.quarantined", quarantined);
        add(diskRecovered, recovered);
        add(diskQuarantined, quarantined);
    }

    /** A record file that failed validation was moved aside. */
    public void quarantined() {
        counters.increment("disk.quarantined");
        add(diskQuarantined, 1);
    }

    /**
     * Sets this node's gauges to zero (a stopped node holds nothing) and frees its node name; idempotent. The
     * instruments stay registered: what was recorded since the backend's last snapshot is still exported, and the next
     * node of this name continues the series.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        gauges.forEach(g -> g.update(0));
        synchronized (NODES_IN_USE) {
            NODES_IN_USE.remove(node);
        }
    }

    private void restoreEnded(RestoreEnd end) {
        counters.increment(end.counter);
        add(restores.get(end), 1);
    }

    private void unwritable(Unwritable why, int n) {
        counters.add(why.counter, n);
        add(unwritable.get(why), n);
    }

    /** Adds {@code n} to {@code c}, unless it is the counter of a tier this node lacks (null). */
    private static void add(Counter c, long n) {
        if (c != null) {
            c.increment(n);
        }
    }

    /** Sets {@code g} to {@code value}, unless it is the gauge of a tier this node lacks (null). */
    private static void set(Gauge g, double value) {
        if (g != null) {
            g.update(value);
        }
    }

    /** Records {@code nanos} into {@code h}, unless it is the histogram of a tier this node lacks (null). */
    private static void record(Histogram h, long nanos) {
        if (h != null) {
            h.record(Math.max(0, nanos));
        }
    }

    private Gauge gauge(Gauge g) {
        gauges.add(g);
        return g;
    }

    /** The instruments of this node's tiers; {@code get} of a tier it lacks answers null. */
    private <V> Map<Tier, V> byTier(Function<Tier, V> make) {
        return byTier(tiers, make);
    }

    private static <V> Map<Tier, V> byTier(Set<Tier> of, Function<Tier, V> make) {
        Map<Tier, V> m = new EnumMap<>(Tier.class);
        of.forEach(t -> m.put(t, make.apply(t)));
        return m;
    }

    private static <E extends Enum<E>, V> Map<E, V> byEnum(Class<E> type, Function<E, V> make) {
        Map<E, V> m = new EnumMap<>(type);
        for (E e : type.getEnumConstants()) {
            m.put(e, make.apply(e));
        }
        return m;
    }
}
