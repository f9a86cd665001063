package dev.selene.actors.cache;

import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceOutcome;
import dev.selene.actors.trace.TraceSource;
import dev.selene.actors.value.Tier;
import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.policy.Policies;
import dev.selene.engine.slots.SlotList;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

import java.util.List;

/**
 * What the catalog's parts share, all confined to the catalog actor: its context and timers, the node's record
 * context, the stores, the {@link RecordCatalog} (the one record of every record's state, its slots and the clean
 * count) and the {@link SlotLedger} (the free slots and the requests waiting for them).
 */
final class CatalogCore {

    final ActorContext<Catalog.Command> ctx;
    final TimerScheduler<Catalog.Command> timers;
    final RecordContext records;
    final TraceSource origin;
    /** Where spills go: the disk store, else the pool store, else null (memory only). */
    final ActorRef<Store.Command> durable;
    /** Whether the durable store is a disk (it scans at start); otherwise it is the pool. */
    final boolean diskTier;
    /** The pool store, or null without a pool. */
    final ActorRef<Store.Command> pool;
    final RecordCatalog catalog;
    final SlotLedger slots;
    final Catalog.Settings settings;
    final Catalog.RecordActors recordActors;
    /** Whether the disk's records are known (at once without a disk): no spill is planned before. */
    boolean recovered;

    CatalogCore(ActorContext<Catalog.Command> ctx, TimerScheduler<Catalog.Command> timers, RecordContext records,
                Catalog.SlotShape shape, ActorRef<Store.Command> disk, ActorRef<Store.Command> pool,
                Catalog.Settings settings, Catalog.RecordActors recordActors) {
        this.ctx = ctx;
        this.timers = timers;
        this.records = records;
        this.origin = TraceSource.of("Catalog", ctx);
        this.durable = disk != null ? disk : pool;
        this.diskTier = disk != null;
        this.pool = pool;
        this.settings = settings;
        this.recordActors = recordActors;
        // With the pool as its only durable tier, a node remembers of what it retired at most what the pool's
        // managers can hold (they say so when they join); past that it forgets its oldest retired records (their
        // copies stay in the pool, and a lookup finds them through the directory). Until a manager has said, nothing
        // is retired.
        long capacity = disk != null ? settings.diskCapacityBytes() : 0;
        this.catalog = new RecordCatalog(records.layout(), durable != null, capacity, settings.spillInFlightCap(),
                settings.clock(), Policies.create(settings.policy()));
        this.slots = new SlotLedger(shape.total(), shape.intake(), catalog::cleanSlots, this::evictClean,
                records.traces(), origin, records.faults());
        this.recovered = disk == null;
    }

    /**
     * Drops the coldest clean records worth at least {@code wanted} slots so that a grant leaves the intake free;
     * returns their slots (the ledger frees them).
     */
    private List<SlotList> evictClean(int wanted) {
        RecordCatalog.Removal r = catalog.evictClean(wanted);
        records.metrics().evicted(Tier.MEMORY, r.removed().size());
        for (RecordKey k : r.removed()) {
            records.traces().append(k, origin, 0, "Evicted from memory (coldest clean) for an allocation",
                    TraceOutcome.EVICTED);
        }
        records.metrics().rowsDropped(r.rowsDropped().size());
        for (RecordKey k : r.rowsDropped()) {
            records.traces().append(k, origin, 0, "Row dropped from memory for an allocation; its pages stay for the"
                    + " records under it", null);
        }
        return r.slots();
    }

    /** The tier of a record the catalog holds: memory, or the durable store's. */
    Tier tier(RecordCatalog.Where where) {
        return where == RecordCatalog.Where.MEMORY ? Tier.MEMORY : durableTier();
    }

    /** The tier spills go to: disk when there is one, else the pool (memory when there is neither). */
    Tier durableTier() {
        return diskTier ? Tier.DISK : pool != null ? Tier.POOL : Tier.MEMORY;
    }

    /** Where record actors write: the durable store, and the pool besides when the durable store is a disk. */
    RecordActor.Stores stores() {
        return new RecordActor.Stores(durable, diskTier ? pool : null, !diskTier && pool != null);
    }

    /** Brings the slot gauges and the catalog's gauges up to date (after every message). */
    void updateGauges() {
        SlotLedger.Stats s = slots.stats();
        records.metrics().slots(s.total(), s.intake(), s.free(), s.clean());
        records.metrics().catalog(catalog, durableTier());
    }
}
