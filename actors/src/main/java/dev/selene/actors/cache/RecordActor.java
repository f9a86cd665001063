package dev.selene.actors.cache;

import dev.selene.actors.api.AbandonReason;
import dev.selene.actors.api.PublishResult;
import dev.selene.actors.api.RetryReason;
import dev.selene.actors.trace.TraceOutcome;
import dev.selene.actors.trace.TraceSource;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.CopyPlan;
import dev.selene.transport.gpu.CopyPlans;
import dev.selene.transport.gpu.DevicePlacement;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The actor that carries records in flight, one at a time, from a publication to at rest: allocate its slots
 * (waiting in line for them while the caller's snapshot lease lasts), copy it from the GPU snapshot, hand it to the
 * catalog as resident; then, when a durable tier exists, stay until the catalog asks for its spill, write it
 * (retrying a failed write once unless the disk is full) and report the commit. When its record is at rest —
 * resident on a memory-only node, committed otherwise, or gone — it tells the catalog so in that last report and
 * waits, idle, for the next record the catalog gives it: the catalog keeps a few idle ones, so that a publication
 * costs no actor spawn and stop.
 *
 * <p>Every command about a record carries the {@code generation} the catalog gave that record's assignment, and so
 * does every message the actor sends itself; one from an earlier assignment (a lease timer that fired as it was
 * cancelled) is ignored. The slots stay leased until the copy has completed, whatever happens to the actor: the
 * catalog learns the lease and the copy's completion before anything can fail. Once resident, the slots are the
 * catalog's. A failure stops the actor (the catalog watches it and releases what its record held).
 */
final class RecordActor {

    /** The protocol. */
    sealed interface Command permits Publish, Spill, Dropped, CopyFinished, WriteAnswered, PoolAnswered,
            LeaseEnded, SlotPool.AllocateReply {
    }

    /**
     * From the catalog, to an idle actor: publish {@code spec} from {@code snapshot}. With a positive
     * {@code patience} it waits in line for slots that long (the caller's snapshot lease) and is then abandoned;
     * with zero it is told {@code Retry(no_space)} at once when no slots are free. Its trace events carry the
     * publication's {@code correlation}.
     */
    record Publish(long generation, RecordSpec spec, DevicePlacement snapshot, Duration patience,
                   SlotPool.LeaseNotice notice, ActorRef<PublishResult> replyTo, long correlation)
            implements Command {
    }

    /**
     * From the catalog: write {@code spec} from {@code slots} (pinned until the commit is reported) — the record this
     * actor holds, or, sent to an idle actor, a resident dirty record that has no actor (restored, or its file went).
     */
    record Spill(long generation, RecordSpec spec, SlotList slots) implements Command {
    }

    /**
     * From the catalog: the record left memory while parked (dropped, expired, evicted); the actor reports itself
     * free with {@link Catalog.Released}.
     */
    record Dropped(long generation) implements Command {
    }

    private record CopyFinished(long generation, Throwable failure) implements Command {
    }

    private record WriteAnswered(long generation, int attempt, Store.WriteReply reply) implements Command {
    }

    private record PoolAnswered(long generation, Store.WriteReply reply) implements Command {
    }

    /**
     * Where a record is written: the durable store (the disk, or the pool on a node without a disk; null on a
     * memory-only node), and the pool besides when the durable store is a disk (null otherwise).
     */
    record Stores(ActorRef<Store.Command> durable, ActorRef<Store.Command> pool) {
    }

    private record LeaseEnded(long generation) implements Command {
    }

    private RecordActor() {
    }

    /** An idle record actor of a node, reporting to {@code catalog} and writing to {@code stores}. */
    static Behavior<Command> create(RecordContext records, ActorRef<Catalog.Command> catalog, Stores stores) {
        return records.faults().around("RecordActor", Command.class, Behaviors.setup(
                ctx -> new Worker(ctx, records, catalog, stores, TraceSource.of("RecordActor", ctx)).idle()));
    }

    /** What the actor keeps across its records. */
    private record Worker(ActorContext<Command> ctx, RecordContext records, ActorRef<Catalog.Command> catalog,
                          Stores stores, TraceSource origin) {

        /** Waiting for a record; whatever else comes is left over from an earlier one. */
        Behavior<Command> idle() {
            return Behaviors.receive(Command.class)
                    .onMessage(Publish.class, this::publish)
                    .onMessage(Spill.class, s -> new Phase(this, s.generation(), s.spec(), 0, null, 0)
                            .spill(s.slots()))
                    .onAnyMessage(m -> Behaviors.same())
                    .build();
        }

        private Behavior<Command> publish(Publish p) {
            long startNanos = records.clock().getAsLong();
            RecordSpec spec = p.spec();
            int slots = spec.slots(records.layout());
            boolean waits = p.patience().isPositive();
            Phase phase = new Phase(this, p.generation(), spec, p.notice().ticket(), p.replyTo(), p.correlation());
            phase.trace(waits ? "Publish: allocate " + slots + " slots (waiting up to " + p.patience().toMillis()
                    + " ms)" : "Publish: allocate " + slots + " slots");
            // The slot pool's replies are part of this protocol: no message adapter to register and remove per
            // record. A request that waits is told Queued when it cannot be granted at once; only then does the
            // lease's timer start (for what is left of the patience), so a publication granted at once schedules
            // nothing.
            records.slotPool().tell(new SlotPool.Allocate(spec.key(), slots, Purpose.PUBLISH, waits,
                    ctx.getSelf().narrow(), p.notice()));
            return phase.allocating(p.snapshot(), startNanos, System.nanoTime() + p.patience().toNanos(), null,
                    false);
        }
    }

    /**
     * The states of one record, sharing what they all need; {@code correlation} is its publication's, 0 for a
     * record restored or written again. A message of another {@code generation} is left over from an earlier
     * record of this actor and is ignored.
     */
    private record Phase(Worker w, long generation, RecordSpec spec, long ticket, ActorRef<PublishResult> replyTo,
                         long correlation) {

        RecordKey key() {
            return spec.key();
        }

        void trace(String message) {
            w.records().traces().append(spec.key(), w.origin(), correlation, message, null);
        }

        void trace(String message, String outcome) {
            w.records().traces().append(spec.key(), w.origin(), correlation, message, outcome);
        }

        /**
         * Waiting for the slot pool's answer; the lease ends at {@code leaseEndNanos} ({@link System#nanoTime}),
         * {@code lease} is its timer once the request is queued.
         */
        Behavior<Command> allocating(DevicePlacement snapshot, long startNanos, long leaseEndNanos,
                                     Cancellable lease, boolean leaseEnded) {
            RecordContext records = w.records();
            ActorContext<Command> ctx = w.ctx();
            return Behaviors.receive(Command.class)
                    .onMessage(SlotPool.AllocateReply.class, r -> switch (r) {
                        case SlotPool.Queued q -> {
                            long left = leaseEndNanos - System.nanoTime();
                            if (left <= 0) {
                                ctx.getSelf().tell(new LeaseEnded(generation));
                                yield Behaviors.same();
                            }
                            yield allocating(snapshot, startNanos, leaseEndNanos,
                                    ctx.scheduleOnce(Duration.ofNanos(left), ctx.getSelf(), new LeaseEnded(generation)),
                                    leaseEnded);
                        }
                        case SlotPool.Allocated a when leaseEnded -> {
                            records.slotPool().tell(new SlotPool.Release(a.slots(), false));
                            yield abandoned();
                        }
                        case SlotPool.Allocated a -> {
                            if (lease != null) {
                                lease.cancel();
                            }
                            yield startCopy(snapshot, startNanos, a.slots());
                        }
                        case SlotPool.Cancelled c -> abandoned();
                        case SlotPool.Short s -> ended(new PublishResult.Retry(RetryReason.NO_SPACE));
                        case SlotPool.Oversize o -> ended(new PublishResult.Oversize(o.slots(), o.maxSlots()));
                    })
                    .onMessage(LeaseEnded.class, t -> {
                        if (leaseEnded || t.generation() != generation) {
                            return Behaviors.same();
                        }
                        records.slotPool().tell(new SlotPool.Cancel(key(), Purpose.PUBLISH, ticket));
                        return allocating(snapshot, startNanos, leaseEndNanos, null, true);
                    })
                    .onAnyMessage(m -> Behaviors.same())
                    .build();
        }

        private Behavior<Command> abandoned() {
            trace("Abandoned: the snapshot lease ended while waiting for slots",
                    TraceOutcome.abandoned(AbandonReason.NO_SPACE));
            w.records().metrics().abandoned(AbandonReason.NO_SPACE);
            return ended(new PublishResult.Abandoned(AbandonReason.NO_SPACE.label()));
        }

        private Behavior<Command> ended(PublishResult result) {
            if (!(result instanceof PublishResult.Abandoned)) {
                trace("Publish ended without the record", TraceOutcome.of(result));
            }
            w.catalog().tell(new Catalog.PublicationEnded(key(), w.ctx().getSelf()));
            w.records().reply(replyTo, result);
            return w.idle();
        }

        private Behavior<Command> startCopy(DevicePlacement snapshot, long startNanos, SlotList slots) {
            // The slot pool told the catalog of the grant before this actor heard of it, so that a crash frees
            // the slots; the catalog learns the copy's completion below, before anything else can fail.
            RecordContext records = w.records();
            CompletableFuture<Void> copy;
            long bytes;
            try {
                CopyPlan plan = CopyPlans.forRecord(records.layout(), records.host(), slots, snapshot, spec.hasRow());
                bytes = plan.totalBytes();
                copy = records.transfers().track(records.copier().copyToHost(plan));
            } catch (RuntimeException e) {
                return failCopy(slots, AbandonReason.BAD_SNAPSHOT, e);
            }
            trace("Copy D2H started: " + bytes + " bytes");
            w.catalog().tell(new Catalog.Leased(key(), slots, copy));
            w.ctx().pipeToSelf(copy, (v, failure) -> new CopyFinished(generation, failure));
            return Behaviors.receive(Command.class)
                    .onMessage(CopyFinished.class, f -> {
                        if (f.generation() != generation) {
                            return Behaviors.same();
                        }
                        if (f.failure() != null) {
                            return failCopy(slots, AbandonReason.COPY_FAILED, f.failure());
                        }
                        trace("Copy D2H done");
                        records.metrics().publishLatency(records.clock().getAsLong() - startNanos);
                        w.catalog().tell(new Catalog.Resident(spec, slots, bytes, replyTo, w.ctx().getSelf(),
                                correlation));
                        return w.stores().durable() == null ? w.idle() : parked();
                    })
                    .onAnyMessage(m -> Behaviors.same())
                    .build();
        }

        private Behavior<Command> failCopy(SlotList slots, AbandonReason reason, Throwable cause) {
            RecordContext records = w.records();
            records.slotPool().tell(new SlotPool.Release(slots, false));
            trace("Failed (" + reason.label() + "): " + cause.getMessage(), TraceOutcome.failed(reason));
            records.metrics().abandoned(reason);
            w.catalog().tell(new Catalog.PublicationEnded(key(), w.ctx().getSelf()));
            records.reply(replyTo, new PublishResult.Failed(reason.label(), String.valueOf(cause.getMessage())));
            return w.idle();
        }

        Behavior<Command> parked() {
            return Behaviors.receive(Command.class)
                    .onMessage(Spill.class, s -> s.generation() != generation ? Behaviors.same() : spill(s.slots()))
                    .onMessage(Dropped.class, d -> {
                        if (d.generation() != generation) {
                            return Behaviors.same();
                        }
                        w.catalog().tell(new Catalog.Released(w.ctx().getSelf()));
                        return w.idle();
                    })
                    .onAnyMessage(m -> Behaviors.same())
                    .build();
        }

        /**
         * Writes to the durable store; with a disk and a pool, retires to the pool at the same time (once, no
         * retry: the pool copy serves other hosts and outlives the disk's, the disk decides whether the record is
         * clean). The slots stay pinned until both have answered.
         */
        private Behavior<Command> spill(SlotList slots) {
            boolean alsoPool = w.stores().pool() != null;
            if (alsoPool) {
                trace("Retire to the pool started (beside the disk write)");
                w.ctx().ask(Store.WriteReply.class, w.stores().pool(), w.records().writeCheck(),
                        r -> new Store.Write(spec, slots, r),
                        (reply, failure) -> new PoolAnswered(generation, reply));
            }
            return write(slots, 1, alsoPool);
        }

        private Behavior<Command> write(SlotList slots, int attempt, boolean poolPending) {
            trace(attempt == 1 ? "Spill: write started" : "Spill: write retried");
            // An ask per attempt, so a late answer is never taken for another attempt's. When no answer comes in
            // time (the store failed and lost the message, or the disk stalls) the store is asked how the write
            // ended: it answers when a running write finishes, and says so when none is running.
            w.ctx().ask(Store.WriteReply.class, w.stores().durable(), w.records().writeCheck(),
                    r -> new Store.Write(spec, slots, r),
                    (reply, failure) -> new WriteAnswered(generation, attempt, reply));
            return writing(slots, attempt, poolPending);
        }

        private Behavior<Command> writing(SlotList slots, int attempt, boolean poolPending) {
            return Behaviors.receive(Command.class)
                    .onMessage(WriteAnswered.class, a -> a.generation() != generation || a.attempt() != attempt
                            ? Behaviors.same()
                            : a.reply() == null ? settle(attempt) : switch (a.reply()) {
                        case Store.Written ok -> ended(new Catalog.Committed(key(), ok.bytes(), ok.nanos(),
                                w.ctx().getSelf()), poolPending);
                        case Store.NotWritten n -> write(slots, attempt, poolPending); // its request was lost
                        case Store.WriteFailed f when !f.diskFull() && attempt == 1 -> write(slots, 2, poolPending);
                        case Store.WriteFailed f -> {
                            trace("Spill given up: " + f.reason());
                            yield ended(new Catalog.WriteGivenUp(key(), f.diskFull(), f.reason(), w.ctx().getSelf()),
                                    poolPending);
                        }
                    })
                    .onMessage(PoolAnswered.class, p -> {
                        if (p.generation() != generation) {
                            return Behaviors.same();
                        }
                        poolOutcome(p.reply());
                        return writing(slots, attempt, false);
                    })
                    .onAnyMessage(m -> Behaviors.same())
                    .build();
        }

        /** Reports the write's outcome to the catalog once the pool has answered too (it reads the same slots). */
        private Behavior<Command> ended(Catalog.Command outcome, boolean poolPending) {
            if (!poolPending) {
                w.catalog().tell(outcome);
                return w.idle();
            }
            return Behaviors.receive(Command.class)
                    .onMessage(PoolAnswered.class, p -> {
                        if (p.generation() != generation) {
                            return Behaviors.same();
                        }
                        poolOutcome(p.reply());
                        w.catalog().tell(outcome);
                        return w.idle();
                    })
                    .onAnyMessage(m -> Behaviors.same())
                    .build();
        }

        private void poolOutcome(Store.WriteReply reply) {
            if (reply instanceof Store.Written) {
                trace("Retired to the pool", TraceOutcome.RETIRED);
                return;
            }
            trace("Not retired to the pool: " + (reply == null ? "no answer in time"
                    : reply instanceof Store.WriteFailed f ? f.reason() : "it was not written"));
        }

        private Behavior<Command> settle(int attempt) {
            trace("No answer from the store: asking how the write ended");
            w.ctx().ask(Store.WriteReply.class, w.stores().durable(), w.records().writeCheck(),
                    r -> new Store.Settle(key(), r),
                    (reply, failure) -> new WriteAnswered(generation, attempt, reply));
            return Behaviors.same();
        }
    }
}
