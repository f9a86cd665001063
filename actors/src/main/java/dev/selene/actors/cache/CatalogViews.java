package dev.selene.actors.cache;

import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.DiskStatus;
import dev.selene.actors.value.PoolStatus;
import dev.selene.actors.value.RecordDescription;
import dev.selene.actors.value.RecordPage;
import dev.selene.actors.value.RecordView;
import dev.selene.actors.value.Tier;
import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.engine.cost.BandwidthEstimator;
import dev.selene.engine.key.RecordKey;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The catalog's part for what it shows: record listings and descriptions, the node's status, its invariants. */
final class CatalogViews {

    private final CatalogCore core;
    private final Restores restores;

    CatalogViews(CatalogCore core, Restores restores) {
        this.core = core;
        this.restores = restores;
    }

    /**
     * The first broken invariant of the catalog, then of its slots (the free list, and the clean count against the
     * slots in use), or an empty string.
     */
    String invariantViolation() {
        try {
            core.catalog.checkInvariants();
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
        return core.slots.invariantViolation();
    }

    private RecordView view(RecordCatalog.Info i) {
        String state = i.pins() > 0 && i.state() != RecordCatalog.State.BEING_WRITTEN ? "pinned"
                : i.state().label();
        return new RecordView(i.key(), i.spec().parent(), i.spec().hasRow(), core.tier(i.where()), state, i.slots(),
                core.records.layout().recordBytes(i.spec().hasRow()), TimeUnit.NANOSECONDS.toMillis(i.idleNanos()),
                i.onDisk() ? core.durableTier() : null);
    }

    RecordPage page(Catalog.ListRecords l) {
        RecordCatalog.Where where = l.tier() == null ? null : l.tier() == Tier.MEMORY ? RecordCatalog.Where.MEMORY
                : l.tier() == core.durableTier() ? RecordCatalog.Where.DISK : null;
        if (l.tier() != null && where == null) {
            return RecordPage.empty(l.offset());
        }
        List<RecordCatalog.Info> all = core.catalog.list(l.namespace(), where);
        int from = Math.min(Math.max(0, l.offset()), all.size());
        int to = (int) Math.min(all.size(), (long) from + Math.max(0, l.limit())); // a limit near 2^31 must not wrap
        List<RecordView> views = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            views.add(view(all.get(i)));
        }
        return new RecordPage(all.size(), l.offset(), views);
    }

    RecordDescription describe(RecordKey key) {
        RecordCatalog.Description d = core.catalog.describe(key);
        if (d == null) {
            return RecordDescription.absent(key);
        }
        if (d.record().state() == RecordCatalog.State.IN_FLIGHT) {
            return new RecordDescription(key, "in_flight", null, List.of(), false);
        }
        List<RecordView> chain = new ArrayList<>(d.chain().size());
        d.chain().forEach(i -> chain.add(view(i)));
        return new RecordDescription(key, d.record().where() == RecordCatalog.Where.MEMORY ? "resident"
                : core.diskTier ? "on_disk" : "in_pool",
                view(d.record()), List.copyOf(chain), d.complete());
    }

    CacheStatus status() {
        SlotLedger.Stats s = core.slots.stats();
        RecordCatalog.Stats c = core.catalog.stats();
        BandwidthEstimator estimate = restores.readEstimate();
        DiskStatus diskStatus = !core.diskTier ? null : new DiskStatus(c.diskRecords(), c.diskBytes(),
                core.catalog.diskCapacityBytes(), c.writing(), core.catalog.filesPinned(),
                estimate.bytesPerSecond(core.settings.clock().getAsLong()), estimate.samples());
        BandwidthEstimator poolEstimate = restores.poolEstimate();
        PoolStatus poolStatus = core.diskTier || core.pool == null ? null : new PoolStatus(c.diskRecords(),
                c.diskBytes(), core.catalog.diskCapacityBytes(),
                poolEstimate.bytesPerSecond(core.settings.clock().getAsLong()), poolEstimate.samples());
        Map<String, Long> counters = core.records.metrics().counters().snapshot();
        long heldBack = core.catalog.rowsHeldBack();
        if (heldBack > 0) {
            counters.put("rows.held-back", heldBack);
        }
        return new CacheStatus(true, s.total(), s.intake(), s.free(), s.clean(), c.residentRecords(), c.inFlight(),
                counters, diskStatus, poolStatus, core.records.metrics().node());
    }
}
