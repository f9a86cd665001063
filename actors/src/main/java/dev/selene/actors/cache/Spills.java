package dev.selene.actors.cache;

import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceOutcome;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.Durations;
import dev.selene.actors.value.Tier;
import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.slots.SlotList;
import org.apache.pekko.actor.typed.ActorRef;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The catalog's part for spilling and pressure: plans spills (parents before children) when the slots' pressure
 * changes, a publication becomes resident, a write ends, or a drain starts; applies what the record actors report
 * of their writes; runs a drain; and carries out every removal the catalog decides (stops the removed records'
 * actors, deletes their files, frees their slots).
 */
final class Spills {

    /** The most times one message's pressure is relieved in a row (each plan may change it again). */
    private static final int PRESSURE_ROUNDS = 8;

    private final CatalogCore core;
    private Publications publications;
    private long targetSlots;
    /** The slots' last pressure: why spills are planned (named in each record's trace). */
    private SlotLedger.Pressure pressure;
    private ActorRef<DrainReport> drainReplyTo;
    /** Callers that asked for a drain while one ran: they get its report when it ends. */
    private final List<ActorRef<DrainReport>> drainJoined = new ArrayList<>();
    private int drainWritten;
    private int drainSkipped;
    /** When a full disk was last said at ERROR (0: never). */
    private long diskFullSaidAt;

    Spills(CatalogCore core) {
        this.core = core;
    }

    /** The part that keeps the record actors (set once, right after both are made). */
    void attach(Publications publications) {
        this.publications = publications;
    }

    /** After every message: when the slots' pressure changed, the spill plan follows it. */
    void relievePressure() {
        for (int round = 0; round < PRESSURE_ROUNDS; round++) {
            SlotLedger.Pressure p = core.slots.takePressure();
            if (p == null) {
                return;
            }
            if (core.durable == null) {
                continue; // nothing to spill to: memory-only nodes only evict
            }
            targetSlots = p.deficitSlots();
            pressure = p;
            plan();
        }
    }

    void plan() {
        if (core.durable == null || !core.recovered) {
            return;
        }
        long target = drainReplyTo != null ? Long.MAX_VALUE : targetSlots;
        if (target <= core.catalog.writingSlots() && drainReplyTo == null) {
            return;
        }
        RecordCatalog.SpillPlan plan = core.catalog.planSpills(target);
        core.records.metrics().evicted(core.durableTier(), plan.removal().files().size());
        apply(plan.removal(), "File evicted from the disk for room");
        if (!plan.orphans().removed().isEmpty()) {
            core.records.metrics().droppedOrphans(plan.orphans().removed().size());
            if (drainReplyTo != null) {
                drainSkipped += plan.orphans().removed().size();
            }
            apply(plan.orphans(), "Dropped: its chain hangs from an ancestor that is in no tier, so it can never be "
                    + "written nor matched");
        }
        String why = plan.start().isEmpty() ? null : spillReason();
        for (RecordCatalog.SpillStart s : plan.start()) {
            RecordKey key = s.spec().key();
            Publications.Live f = publications.forSpill(key);
            core.records.traces().append(key, core.origin, "Spill planned: " + why + "; "
                    + core.catalog.writesInFlight() + " writes in flight");
            core.records.metrics().spillStarted(core.catalog.writesInFlight());
            f.actor().tell(new RecordActor.Spill(f.ticket(), s.spec(), s.slots()));
        }
        if (drainReplyTo != null && core.catalog.writesInFlight() == 0) {
            finishDrain(false);
        }
    }

    /** Why the records of a plan are written, in words for their traces. */
    private String spillReason() {
        if (drainReplyTo != null) {
            return "a drain writes every dirty record";
        }
        if (pressure == null) {
            return "memory pressure";
        }
        return "memory pressure (free + clean slots are " + pressure.deficitSlots()
                + " short of two intakes plus the waiting requests: " + pressure.freeSlots() + " free, "
                + pressure.cleanSlots() + " clean); written coldest first, parents before children";
    }

    /**
     * Applies a size lowered while files were in use (read by restores, hung from by writes), once some of them are
     * free: called when a read or a write ends, not on every plan (it walks the files while one is pending).
     */
    void settleCapacity() {
        apply(core.catalog.settleCapacity(), "Removed to bring the tier within its lowered size, once the files "
                + "in use that held it above were free");
    }

    void committed(Catalog.Committed c) {
        publications.free(c.actor());
        committed(c.key(), c.fileBytes());
    }

    private void committed(RecordKey key, long fileBytes) {
        publications.forget(key);
        switch (core.catalog.committed(key, fileBytes)) {
            case COMMITTED -> {
                if (drainReplyTo != null) {
                    drainWritten++;
                }
                core.records.metrics().spillCommitted();
                core.records.traces().append(key, core.origin, 0, "Clean (file committed)", TraceOutcome.SPILLED);
            }
            case PARENT_GONE -> {
                core.durable.tell(new Store.Delete(List.of(key)));
                core.records.traces().append(key, core.origin, "Written, then deleted: its parent's file is gone; "
                        + "dirty again");
            }
            case RECORD_GONE -> {
                core.durable.tell(new Store.Delete(List.of(key)));
                core.records.traces().append(key, core.origin, "Written, then deleted: the record left memory");
            }
        }
        settleCapacity();
        plan();
    }

    void givenUp(Catalog.WriteGivenUp g) {
        publications.free(g.actor());
        if (g.diskFull() && core.diskTier) {
            diskFull(g.key(), g.reason());
        } else {
            givenUp(g.key(), g.reason());
        }
    }

    private void givenUp(RecordKey key, String reason) {
        publications.forget(key);
        core.records.metrics().spillGivenUp();
        core.records.traces().append(key, core.origin, 0, "Spill given up (" + reason + ")",
                TraceOutcome.SPILL_GIVEN_UP);
        RecordCatalog.Removal dropped = core.catalog.writeFailed(key);
        core.records.metrics().droppedUnwritable(dropped.removed().size());
        if (drainReplyTo != null) {
            drainSkipped += dropped.removed().size(); // dropped, so no longer dirty: counted here or never
        }
        apply(dropped, "Dropped: its file (or an ancestor's) can never be written");
        settleCapacity();
        plan();
    }

    /** How the write of a record whose actor failed ended, as its store said. */
    void settled(Catalog.WriteSettled w) {
        if (core.catalog.state(w.key()) != RecordCatalog.State.BEING_WRITTEN || publications.live(w.key()) != null) {
            return;
        }
        switch (w.reply()) {
            case Store.Written ok -> committed(w.key(), ok.bytes());
            case Store.WriteFailed f -> givenUp(w.key(), f.reason());
            case Store.NotWritten n -> {
                // The write never ran: the record is dirty as before and is planned again (with a new actor).
                core.catalog.writeNeverRan(w.key());
                core.records.traces().append(w.key(), core.origin, "Its write never ran; dirty again");
                settleCapacity();
                plan();
            }
        }
    }

    /**
     * A write found the disk full before the tier's size was reached: the tier's size becomes what the disk held,
     * the coldest files make room, and the record is written again (the write's retry does not apply: a full disk
     * is not a failed record). Said once at ERROR, then at most once a minute.
     */
    private void diskFull(RecordKey key, String reason) {
        publications.forget(key);
        long before = core.catalog.diskCapacityBytes();
        RecordCatalog.Removal r = core.catalog.diskFull(key);
        core.records.metrics().diskFull(core.catalog.diskCapacityBytes());
        core.records.metrics().evicted(Tier.DISK, r.files().size());
        core.records.traces().append(key, core.origin, "The disk was full: dirty again, written once room is made");
        long now = core.settings.clock().getAsLong();
        if (diskFullSaidAt == 0 || now - diskFullSaidAt > TimeUnit.MINUTES.toNanos(1)) {
            diskFullSaidAt = now;
            core.ctx.getLog().error("the disk tier's disk is full ({}): the tier now holds at most {} (was {}); "
                    + "the coldest files are deleted to make room and writing goes on", reason,
                    ByteSize.format(core.catalog.diskCapacityBytes()), ByteSize.format(before));
        }
        apply(r, "File evicted: the disk was full");
        plan();
    }

    void fileLost(RecordKey key) {
        apply(core.catalog.fileLost(key), "Dropped: its file is gone or failed validation");
        plan();
    }

    void drain(Catalog.Drain d) {
        if (core.durable == null) {
            core.ctx.getLog().info("drain asked for, but there is no disk or pool to drain to");
            d.replyTo().tell(new DrainReport(0, 0, false));
            return;
        }
        if (drainReplyTo != null) {
            // One drain at a time: a second caller waits for the running one and gets its report (answering at once
            // would tell it "drained" while records are still being written).
            drainJoined.add(d.replyTo());
            return;
        }
        drainReplyTo = d.replyTo();
        drainWritten = 0;
        drainSkipped = 0;
        core.timers.startSingleTimer(Catalog.DrainTimeout.INSTANCE, d.timeout());
        core.ctx.getLog().info("draining dirty records to the {} (timeout {})", core.durableTier().label(),
                Durations.human(d.timeout()));
        plan();
    }

    void finishDrain(boolean timedOut) {
        if (drainReplyTo == null) {
            return;
        }
        core.timers.cancel(Catalog.DrainTimeout.INSTANCE);
        int skipped = drainSkipped + core.catalog.dirtyRecords();
        core.ctx.getLog().info("drain {}: {} records written, {} skipped", timedOut ? "timed out" : "done",
                drainWritten, skipped);
        DrainReport report = new DrainReport(drainWritten, skipped, timedOut);
        drainReplyTo.tell(report);
        drainJoined.forEach(r -> r.tell(report));
        drainJoined.clear();
        drainReplyTo = null;
    }

    /** Carries out a removal: stops the actors of removed records, deletes files, frees slots. */
    void apply(RecordCatalog.Removal r, String why) {
        if (r.isEmpty()) {
            return;
        }
        for (RecordKey k : r.removed()) {
            core.records.traces().append(k, core.origin, why);
            if (core.catalog.state(k) == null || core.catalog.state(k) == RecordCatalog.State.DURABLE_ONLY) {
                Publications.Live f = publications.forget(k);
                if (f != null) {
                    f.actor().tell(new RecordActor.Dropped(f.ticket()));
                }
            }
        }
        if (!r.files().isEmpty()) {
            core.durable.tell(new Store.Delete(List.copyOf(r.files())));
        }
        for (SlotList s : r.slots()) {
            core.slots.release(s);
        }
    }
}
