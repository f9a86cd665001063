package dev.selene.actors.cache;

import dev.selene.actors.census.ActorCensus;
import dev.selene.actors.store.Store;
import dev.selene.actors.value.LookupResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.Tier;
import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.engine.cost.BandwidthEstimator;
import dev.selene.engine.cost.RestoreCost;
import dev.selene.engine.index.ChainMatch;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotAccounting.Purpose;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The catalog's part for lookups and restores: the match of a chain across the node's tiers and the pool, the
 * restore cost (read estimates per tier against the caller's recompute time), the restore task that carries a
 * restore out, and its staging slots.
 */
final class Restores {

    /** Read bandwidth assumed before any sample (restore cost): a conservative NVMe figure. */
    static final double PRIOR_READ_BYTES_PER_SECOND = 1.0e9;
    /** Pool read bandwidth assumed before any sample (restore cost): a conservative figure for a 25 Gb/s network. */
    static final double PRIOR_POOL_BYTES_PER_SECOND = 1.0e9;
    /** How long a lookup waits for the pool's part of a chain; without an answer the match ends at the node's own. */
    static final Duration POOL_FIND_TIMEOUT = Duration.ofSeconds(6);
    /** The most records of a chain asked of the pool at once. */
    static final int POOL_FIND_MAX_RECORDS = 1024;
    /** The longest duration that counts in nanoseconds; a recompute time beyond it is taken as it. */
    private static final Duration LONGEST_NANOS = Duration.ofNanos(Long.MAX_VALUE);
    /** Half-life with which the read estimate decays back toward the prior between samples. */
    static final long ESTIMATE_HALF_LIFE_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final CatalogCore core;
    private final Spills spills;
    private final BandwidthEstimator readEstimate =
            new BandwidthEstimator("disk", PRIOR_READ_BYTES_PER_SECOND, ESTIMATE_HALF_LIFE_NANOS);
    private final BandwidthEstimator poolEstimate =
            new BandwidthEstimator("pool", PRIOR_POOL_BYTES_PER_SECOND, ESTIMATE_HALF_LIFE_NANOS);
    private long restores;

    Restores(CatalogCore core, Spills spills) {
        this.core = core;
        this.spills = spills;
    }

    /** The disk read estimate (for the status). */
    BandwidthEstimator readEstimate() {
        return readEstimate;
    }

    /** The pool read estimate (for the status). */
    BandwidthEstimator poolEstimate() {
        return poolEstimate;
    }

    /** Staging slots for a restore: granted at once or when they free up, or refused; always answered. */
    void stage(Catalog.Stage s) {
        SlotLedger.Answer answer = core.slots.request(new SlotLedger.Allocation(s.key(), s.slots(), Purpose.STAGING,
                s.waits(), s.request(), 0, slots -> s.replyTo().tell(new Catalog.Staged(slots)),
                () -> s.replyTo().tell(new Catalog.NotStaged("cancelled while waiting"))));
        switch (answer) {
            case GRANTED, QUEUED -> { }
            case SHORT -> s.replyTo().tell(new Catalog.NotStaged("short of slots"));
            case OVERSIZE -> s.replyTo().tell(new Catalog.NotStaged("more slots than staging may ever take"));
        }
    }

    /** A restore gives up waiting for staging: the request, if it still waits, is told it was not staged. */
    void cancelStaging(Catalog.CancelStaging c) {
        core.slots.cancel(c.key(), Purpose.STAGING, c.request());
    }

    /**
     * Answers a lookup or restore at once when the node's own records cover the chain or there is no pool;
     * otherwise first asks the pool for the rest of the chain ({@link PoolExtended} continues).
     */
    void withPool(Catalog.Command request, String namespace, long[] chain) {
        int from = core.catalog.present(namespace, chain).size();
        if (core.pool == null || from >= chain.length) {
            answer(request, List.of());
            return;
        }
        List<Long> rest = new ArrayList<>();
        for (int i = from; i < chain.length && rest.size() < POOL_FIND_MAX_RECORDS; i++) {
            rest.add(chain[i]);
        }
        core.ctx.ask(Store.Found.class, core.pool, POOL_FIND_TIMEOUT, r -> new Store.Find(namespace, rest, r),
                (found, failure) -> new Catalog.PoolExtended(request, from,
                        found == null ? List.of() : found.entries()));
    }

    void extended(Catalog.PoolExtended e) {
        String namespace = e.request() instanceof Catalog.Lookup l ? l.namespace()
                : ((Catalog.Restore) e.request()).namespace();
        long[] chain = e.request() instanceof Catalog.Lookup l ? l.chain() : ((Catalog.Restore) e.request()).chain();
        // The node's own part may have changed while the pool answered: its records continue only where they
        // still end.
        boolean joins = core.catalog.present(namespace, chain).size() == e.from();
        answer(e.request(), joins ? e.found() : List.of());
    }

    private void answer(Catalog.Command request, List<Store.Held> fromPool) {
        switch (request) {
            case Catalog.Lookup l -> l.replyTo().tell(lookup(l.namespace(), l.chain(), fromPool));
            case Catalog.Restore r -> onRestore(r, fromPool);
            default -> throw new IllegalArgumentException("not a lookup or restore: " + request);
        }
    }

    /** One record of a match and the tier it comes from. */
    private record Matched(RecordSpec spec, Tier tier) {
    }

    /**
     * The match of a chain: the node's own records, then the pool's, up to the deepest record with a row (lookup);
     * empty with the reason when nothing matches.
     */
    private List<Matched> match(String namespace, long[] chain, List<Store.Held> fromPool) {
        List<Matched> present = new ArrayList<>();
        for (RecordCatalog.Located l : core.catalog.present(namespace, chain)) {
            present.add(new Matched(l.spec(), core.tier(l.where())));
        }
        RecordKey previous = present.isEmpty() ? null : present.getLast().spec().key();
        for (Store.Held p : fromPool) {
            if (!p.spec().follows(previous)) {
                break; // as in the node's own tiers: the match is a chain, each record hanging from the one before
            }
            present.add(new Matched(p.spec(), Tier.POOL));
            previous = p.spec().key();
        }
        int depth = ChainMatch.depth(present.size(), i -> true, i -> present.get(i).spec().hasRow());
        return present.subList(0, depth);
    }

    private String missReason(String namespace, long[] chain) {
        String local = core.catalog.match(namespace, chain).missReason();
        return core.pool == null ? local : local + " (nor held by the pool)";
    }

    private LookupResult lookup(String namespace, long[] chain, List<Store.Held> fromPool) {
        List<Matched> m = match(namespace, chain, fromPool);
        long tokens = (long) m.size() * core.records.layout().tokensPerRecord();
        core.records.metrics().lookup(!m.isEmpty(), tokens);
        if (m.isEmpty()) {
            return LookupResult.miss(missReason(namespace, chain));
        }
        List<LookupResult.Located> located = new ArrayList<>(m.size());
        for (Matched l : m) {
            located.add(new LookupResult.Located(l.spec().key(), l.spec().hasRow(), l.tier()));
        }
        return new LookupResult(located, tokens, "");
    }

    private void onRestore(Catalog.Restore r, List<Store.Held> fromPool) {
        core.records.metrics().restoreRequested((long) r.chain().length * core.records.layout().tokensPerRecord());
        List<Matched> m = match(r.namespace(), r.chain(), fromPool);
        if (m.isEmpty()) {
            core.records.metrics().restoreMissed();
            r.replyTo().tell(RestoreResult.of(RestoreResult.Outcome.MISS, missReason(r.namespace(), r.chain())));
            return;
        }
        if (r.targets().size() < m.size()) {
            core.records.metrics().restoreFailed();
            r.replyTo().tell(RestoreResult.of(RestoreResult.Outcome.FAILED, "restore of " + m.size()
                    + " records got only " + r.targets().size() + " device placements"));
            return;
        }
        long diskBytes = 0;
        long poolBytes = 0;
        for (Matched l : m) {
            long bytes = core.records.layout().recordBytes(l.spec().hasRow());
            if (l.tier() == Tier.DISK) {
                diskBytes += bytes;
            } else if (l.tier() == Tier.POOL) {
                poolBytes += bytes;
            }
        }
        if (diskBytes + poolBytes > 0) {
            long now = core.settings.clock().getAsLong();
            double diskRate = readEstimate.bytesPerSecond(now);
            double poolRate = poolEstimate.bytesPerSecond(now);
            if (diskBytes > 0) {
                core.records.metrics().readEstimate(diskRate);
            }
            if (poolBytes > 0) {
                core.records.metrics().poolReadEstimate(poolRate);
            }
            long estimate = (long) (diskBytes / diskRate * 1e9 + poolBytes / poolRate * 1e9);
            // saturated: a caller's "never refuse" (a duration of centuries) is not a reason to fail
            long recomputeNanos = r.recompute().compareTo(LONGEST_NANOS) >= 0 ? Long.MAX_VALUE
                    : r.recompute().toNanos();
            if (RestoreCost.refuse(estimate, recomputeNanos)) {
                core.records.metrics().restoreRefused(poolBytes / poolRate > diskBytes / diskRate);
                r.replyTo().tell(RestoreResult.of(RestoreResult.Outcome.REFUSED, String.format(Locale.ROOT,
                        "reading %d bytes from disk (%.2f GB/s) and %d from the pool (%.2f GB/s) is estimated at "
                                + "%.1f ms > recompute %.1f ms", diskBytes, diskRate / 1e9, poolBytes,
                        poolRate / 1e9, estimate / 1e6, recomputeNanos / 1e6)));
                return;
            }
        }
        List<RestoreTask.Part> parts = new ArrayList<>(m.size());
        for (Matched l : m) {
            RecordKey key = l.spec().key();
            if (l.tier() == Tier.MEMORY && core.catalog.pin(key)) {
                core.records.traces().append(key, core.origin, r.correlation(), "Pinned for restore", null);
                parts.add(RestoreTask.Part.memory(l.spec(), core.catalog.slotsOf(key)));
            } else if (core.catalog.pinFile(key)) {
                // The node's own durable copy. Its file stays until the read is over: room for spills is not made
                // by removing it meanwhile.
                core.records.traces().append(key, core.origin, r.correlation(), "File pinned for restore", null);
                parts.add(RestoreTask.Part.ownFile(l.spec(), core.durable, core.durableTier()));
            } else {
                // Another host's record, found in the pool; or one of this node's keys that has no durable copy here
                // (a publication of it still in flight) and whose copy the pool holds.
                parts.add(RestoreTask.Part.stored(l.spec(), core.pool, Tier.POOL, false));
            }
        }
        core.ctx.spawn(RestoreTask.create(core.records, core.ctx.getSelf(), parts, r.targets(),
                r.replyTo(), r.correlation()), "restore-" + (++restores), ActorCensus.MAILBOX);
    }

    void adopt(Catalog.AdoptRestored a) {
        if (core.catalog.adoptRestored(a.spec(), a.slots())) {
            core.records.metrics().promoted();
            core.records.traces().append(a.spec().key(), core.origin, "Resident again after a restore from disk");
            spills.plan();
        } else {
            core.slots.release(a.slots());
        }
    }

    /**
     * A restore no longer reads these durable copies: a size lowered while they were read now applies, and a spill
     * that waited for room they held may start.
     */
    void unpinFiles(List<RecordKey> keys) {
        keys.forEach(core.catalog::unpinFile);
        spills.settleCapacity();
        spills.plan();
    }

    void sample(Catalog.ReadSample s) {
        if (s.bytes() <= 0 || s.nanos() <= 0) {
            return; // a wave that moved nothing tells nothing about bandwidth
        }
        if (s.tier() == Tier.POOL) {
            poolEstimate.sample(s.bytes(), s.nanos(), core.settings.clock().getAsLong());
            core.records.metrics().poolReadEstimate(poolEstimate.bytesPerSecond(core.settings.clock().getAsLong()));
            return;
        }
        readEstimate.sample(s.bytes(), s.nanos(), core.settings.clock().getAsLong());
        core.records.metrics().readSample(s.bytes(), s.nanos());
        core.records.metrics().readEstimate(readEstimate.bytesPerSecond(core.settings.clock().getAsLong()));
    }
}
