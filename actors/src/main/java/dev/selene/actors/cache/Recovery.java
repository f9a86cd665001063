package dev.selene.actors.cache;

import dev.selene.actors.store.Store;
import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.engine.config.ByteSize;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The catalog's part for what the stores say they hold: the disk's records found at start (or after the disk store
 * restarted), the disk's real size, and the pool's capacity when the pool is the only durable tier.
 */
final class Recovery {

    /** The share of the free disk (plus its records) the disk tier takes when its size is more than that. */
    static final double DISK_FILL_FRACTION = 0.95;

    private final CatalogCore core;
    private final Spills spills;

    Recovery(CatalogCore core, Spills spills) {
        this.core = core;
        this.spills = spills;
    }

    /** At start: asks a pool that is the only durable tier for its capacity; sets the disk's and pool's gauges. */
    void start() {
        if (!core.diskTier && core.pool != null) {
            core.pool.tell(new Store.WatchCapacity(core.ctx.messageAdapter(Store.Capacity.class,
                    Catalog.PoolCapacityKnown::new)));
        }
        if (core.diskTier) {
            core.records.metrics().diskCapacity(core.settings.diskCapacityBytes());
            core.records.metrics().readEstimate(Restores.PRIOR_READ_BYTES_PER_SECOND);
        }
        if (core.pool != null) {
            core.records.metrics().poolReadEstimate(Restores.PRIOR_POOL_BYTES_PER_SECOND);
        }
    }

    void disk(DiskStore.Recovery recovery) {
        if (core.recovered) {
            // A restarted store has scanned the directory again (temporaries deleted, bad files quarantined). The
            // catalog keeps its own view: a write that commits while the scan lists the directory, or a delete the
            // store had not run yet, would make the scan's list wrong in either direction. A file the scan
            // quarantined is forgotten when a read finds it gone.
            core.ctx.getLog().info("disk store restarted: it found {} record files; the catalog keeps its view",
                    recovery.records().size());
            spills.plan();
            return;
        }
        long recordBytes = 0;
        for (DiskStore.Found f : recovery.records()) {
            recordBytes += f.fileBytes();
        }
        // The filesystem may hold less than the tier was given: the tier then uses what it can (with a margin for
        // temporaries), says so once, and a later full disk lowers it further.
        long fits = (long) ((recovery.usableBytes() + recordBytes) * DISK_FILL_FRACTION);
        if (fits < core.settings.diskCapacityBytes()) {
            core.ctx.getLog().warn("selene.disk.size = {} is more than the disk can hold ({} free and {} of "
                    + "records): the disk tier uses {}", ByteSize.format(core.settings.diskCapacityBytes()),
                    ByteSize.format(recovery.usableBytes()), ByteSize.format(recordBytes), ByteSize.format(fits));
            spills.apply(core.catalog.limitDiskCapacity(fits),
                    "Deleted at start: the disk holds less than the tier's size");
            core.records.metrics().diskCapacity(core.catalog.diskCapacityBytes());
        }
        long wallNow = System.currentTimeMillis();
        List<RecordCatalog.Recovered> found = new ArrayList<>(recovery.records().size());
        for (DiskStore.Found f : recovery.records()) {
            long ageNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, wallNow - f.lastUse().toEpochMilli()));
            found.add(new RecordCatalog.Recovered(f.spec(), f.fileBytes(), ageNanos));
        }
        spills.apply(core.catalog.recovered(found), "Deleted at start: the disk tier is over its size");
        core.recovered = true;
        core.settings.onReady().run();
        spills.plan();
    }

    void poolCapacity(Store.Capacity c) {
        core.ctx.getLog().info("the pool holds {} of records on {} manager(s): this host remembers at most that "
                + "much of what it retired", ByteSize.format(c.bytes()), c.managers());
        spills.apply(core.catalog.setDurableCapacity(c.bytes()), "Forgotten by this host: it remembers no more "
                + "than the pool's managers hold (" + ByteSize.format(c.bytes()) + "); the pool keeps its copy");
        spills.plan();
    }
}
