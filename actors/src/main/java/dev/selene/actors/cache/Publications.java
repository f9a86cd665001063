package dev.selene.actors.cache;

import dev.selene.actors.census.ActorCensus;
import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceOutcome;
import dev.selene.actors.value.AbandonReason;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RetryReason;
import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import org.apache.pekko.actor.typed.ActorRef;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The catalog's part for publications and the record actors: admits a publication, grants its slots (at once, or
 * when they free up within its patience), hands the record and its slots to an idle record actor in the one message
 * that starts its work, and takes the record back when it is resident. It keeps the record actors working for
 * records ({@code live}, with the slots a publication holds until it is resident) and the idle ones, and handles a
 * record actor's failure.
 */
final class Publications {

    /**
     * How many idle record actors the catalog keeps for the next records; one that comes back beyond that is stopped.
     * Enough for the publications a busy node has in flight at once (a few per engine worker), and small beside the
     * node's memory (an idle actor holds well under a few KiB).
     */
    static final int IDLE_RECORD_ACTORS_KEPT = 256;

    /**
     * The record actor working for a record, the {@code ticket} of its assignment (its messages' generation) and,
     * while it publishes, who waits for it and the slots granted to it (the catalog's to free if it fails).
     */
    record Live(ActorRef<RecordActor.Command> actor, long ticket, ActorRef<PublishResult> replyTo, SlotList lease) {
    }

    private final CatalogCore core;
    private final Spills spills;
    private final Map<RecordKey, Live> live = new HashMap<>();
    /** Record actors waiting for a record, the most recently used first. */
    private final ArrayDeque<ActorRef<RecordActor.Command>> idle = new ArrayDeque<>();
    private long tickets;

    Publications(CatalogCore core, Spills spills) {
        this.core = core;
        this.spills = spills;
    }

    void publish(Catalog.Publish p) {
        RecordKey key = p.spec().key();
        long correlation = p.correlation();
        switch (core.catalog.admit(p.spec())) {
            case IN_FLIGHT -> {
                trace(key, correlation, "Publish: another publication is in flight",
                        TraceOutcome.retry(RetryReason.INFLIGHT));
                core.records.reply(p.replyTo(), new PublishResult.Retry(RetryReason.INFLIGHT));
            }
            case PRESENT -> {
                trace(key, correlation, "Publish: already here (last use refreshed)", TraceOutcome.PRESENT);
                core.records.reply(p.replyTo(), new PublishResult.Present());
            }
            case ADMITTED -> allocate(p, ++tickets);
        }
    }

    /**
     * Asks the ledger for the publication's slots: granted at once or later (then it starts), refused, or queued
     * with a timer for its patience (the caller's snapshot lease).
     */
    private void allocate(Catalog.Publish p, long ticket) {
        int count = p.spec().slots(core.records.layout());
        boolean waits = p.patience().isPositive();
        SlotLedger.Answer answer = core.slots.request(new SlotLedger.Allocation(p.spec().key(), count,
                Purpose.PUBLISH, waits, ticket, p.correlation(), slots -> start(p, ticket, slots), () -> { }));
        switch (answer) {
            case GRANTED -> { }
            case QUEUED -> {
                core.records.traces().append(p.spec().key(), core.origin, p.correlation(),
                        "Publish: waiting up to {} ms for {} slots", p.patience().toMillis(), count, null);
                Catalog.LeaseEnded lease = leaseEnded(p, ticket);
                core.timers.startSingleTimer(lease, lease, p.patience());
            }
            case SHORT -> notPublished(p, new PublishResult.Retry(RetryReason.NO_SPACE));
            case OVERSIZE -> notPublished(p, new PublishResult.Oversize(count, core.slots.maxGrant(Purpose.PUBLISH)));
        }
    }

    /** The slots were granted: an idle record actor copies the record into them. */
    private void start(Catalog.Publish p, long ticket, SlotList slots) {
        RecordKey key = p.spec().key();
        core.timers.cancel(leaseEnded(p, ticket));
        ActorRef<RecordActor.Command> actor = recordActor();
        live.put(key, new Live(actor, ticket, p.replyTo(), slots));
        actor.tell(new RecordActor.Publish(p.spec(), p.snapshot(), ticket, slots, p.replyTo(), p.correlation()));
    }

    /** The timer of a waiting publication's lease: its key, and the message it sends. */
    private static Catalog.LeaseEnded leaseEnded(Catalog.Publish p, long ticket) {
        return new Catalog.LeaseEnded(p.spec().key(), ticket, p.replyTo(), p.correlation());
    }

    private void notPublished(Catalog.Publish p, PublishResult result) {
        core.catalog.publicationEnded(p.spec().key());
        trace(p.spec().key(), p.correlation(), "Publish ended without the record", TraceOutcome.of(result));
        core.records.reply(p.replyTo(), result);
        spills.plan(); // chains that waited for it may now be written, or dropped as orphans
    }

    /** A waiting publication's lease ended before its slots came: it is abandoned (unless granted meanwhile). */
    void leaseEnded(Catalog.LeaseEnded l) {
        if (!core.slots.cancel(l.key(), Purpose.PUBLISH, l.ticket())) {
            return;
        }
        core.catalog.publicationEnded(l.key());
        trace(l.key(), l.correlation(), "Abandoned: the snapshot lease ended while waiting for slots",
                TraceOutcome.abandoned(AbandonReason.NO_SPACE));
        core.records.metrics().abandoned(AbandonReason.NO_SPACE);
        core.records.reply(l.replyTo(), new PublishResult.Abandoned(AbandonReason.NO_SPACE.label()));
        spills.plan();
    }

    private void trace(RecordKey key, long correlation, String message, String outcome) {
        core.records.traces().append(key, core.origin, correlation, message, outcome);
    }

    /** An idle record actor: one kept from an earlier record, or a new one (watched: its failure is handled). */
    ActorRef<RecordActor.Command> recordActor() {
        ActorRef<RecordActor.Command> actor = idle.pollFirst();
        if (actor == null) {
            actor = core.ctx.spawnAnonymous(core.recordActors.create(core.records, core.ctx.getSelf(), core.stores()),
                    ActorCensus.MAILBOX);
            core.ctx.watchWith(actor, new Catalog.RecordTerminated(actor));
        }
        return actor;
    }

    /** {@code actor} has no record any more: kept for the next one, or stopped when enough are kept. */
    void free(ActorRef<RecordActor.Command> actor) {
        if (idle.size() < IDLE_RECORD_ACTORS_KEPT) {
            idle.addFirst(actor);
        } else {
            core.ctx.unwatch(actor);
            core.ctx.stop(actor);
        }
    }

    /** The actor working for {@code key}, or null. */
    Live live(RecordKey key) {
        return live.get(key);
    }

    /** The actor working for {@code key} for a spill: its own, or an idle one given a new ticket. */
    Live forSpill(RecordKey key) {
        return live.computeIfAbsent(key, k -> new Live(recordActor(), ++tickets, null, null));
    }

    /** {@code key}'s actor is done with it (its write ended, or the record left memory); returns it, or null. */
    Live forget(RecordKey key) {
        return live.remove(key);
    }

    void resident(Catalog.Resident r) {
        RecordKey key = r.spec().key();
        SlotList pagesHeld = core.catalog.resident(r.spec(), r.slots());
        if (pagesHeld != null) {
            // a row for a record held without one: the record keeps its own pages, the copy's go back
            core.slots.release(pagesHeld);
            core.records.metrics().rowAdded();
            core.records.traces().append(key, core.origin, r.correlation(), "Row added to the record's pages",
                    null);
        }
        if (core.durable == null) {
            live.remove(key);
            free(r.actor());
        } else {
            Live f = live.get(key);
            live.put(key, new Live(r.actor(), f == null ? 0 : f.ticket(), null, null));
        }
        core.records.traces().append(key, core.origin, r.correlation(), "Resident (dirty) in {} slots",
                r.slots().count(), TraceOutcome.STORED);
        core.records.reply(r.replyTo(), new PublishResult.Stored(r.bytes()));
        spills.plan();
    }

    /** The publication failed in its actor (which answered the publisher): its slots come back. */
    void ended(Catalog.PublicationEnded e) {
        core.catalog.publicationEnded(e.key());
        Live f = live.remove(e.key());
        free(e.actor());
        if (f != null && f.lease() != null) {
            core.slots.release(f.lease());
        }
        spills.plan(); // chains that waited for it may now be written, or dropped as orphans
    }

    void terminated(ActorRef<RecordActor.Command> actor) {
        // Only a failure stops a watched record actor (one stopped for being one too many is unwatched first). It
        // holds at most one record: a rare event, so a scan finds it.
        idle.remove(actor);
        RecordKey key = null;
        for (Map.Entry<RecordKey, Live> e : live.entrySet()) {
            if (e.getValue().actor().equals(actor)) {
                key = e.getKey();
                break;
            }
        }
        if (key == null) {
            return; // it failed between records
        }
        Live f = live.remove(key);
        core.records.metrics().recordActorFailed();
        core.ctx.getLog().warn("record actor for {} failed; its record is released", key);
        failed(key, f);
    }

    private void failed(RecordKey key, Live f) {
        RecordCatalog.State state = core.catalog.state(key);
        if (state == RecordCatalog.State.IN_FLIGHT) {
            core.records.traces().append(key, core.origin, "RecordActor failed while publishing; slots released "
                    + "once the copies in flight end");
            if (f.lease() != null) {
                releaseAfterCopies(f.lease());
            }
            core.catalog.publicationEnded(key);
            core.records.metrics().abandoned(AbandonReason.RECORD_ACTOR_FAILED);
            core.records.reply(f.replyTo(), new PublishResult.Failed(AbandonReason.RECORD_ACTOR_FAILED.label(),
                    "the record's actor stopped unexpectedly"));
        } else if (state == RecordCatalog.State.BEING_WRITTEN) {
            // Its write may still be reading the slots: wait for the store to say how it ended.
            core.records.traces().append(key, core.origin, "RecordActor failed while writing; waiting for the write");
            core.durable.tell(new Store.Settle(key, core.ctx.messageAdapter(Store.WriteReply.class,
                    r -> new Catalog.WriteSettled(r.key(), r))));
        } else {
            core.records.traces().append(key, core.origin, "RecordActor failed while parked; the record stays dirty");
        }
    }

    /**
     * Releases {@code slots} of a failed publication once every device copy in flight now has ended: its actor may
     * have started a copy into them before it failed, and it no longer reports. A failed actor starts no copy, so
     * waiting for the copies running now covers its; the node's other copies only delay the release.
     */
    private void releaseAfterCopies(SlotList slots) {
        core.ctx.pipeToSelf(Piped.nonNull(core.records.transfers().inFlight()),
                (v, e) -> new Catalog.ReleaseAfterCopy(slots));
    }
}
