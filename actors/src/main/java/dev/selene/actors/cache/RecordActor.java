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
 * One record in flight, from its publication to at rest: allocate its slots (waiting in line for them while the
 * caller's snapshot lease lasts), copy it from the GPU snapshot, hand it to the catalog as resident; then, when a
 * durable tier exists, stay until the catalog asks for its spill, write it (retrying a failed write once unless
 * the disk is full) and report the commit. It stops when the record is at rest: resident on a memory-only node,
 * committed otherwise, or gone.
 *
 * <p>The slots stay leased until the copy has completed, whatever happens to the actor: the catalog learns the
 * lease and the copy's completion before anything can fail. Once resident, the slots are the catalog's.
 */
final class RecordActor {

    /** The protocol. */
    sealed interface Command permits Spill, Dropped, CopyFinished, WriteAnswered, PoolAnswered, LeaseEnded,
            SlotPool.AllocateReply {
    }

    /** From the catalog: write the record from {@code slots} (pinned until the commit is reported). */
    record Spill(SlotList slots) implements Command {
    }

    /** From the catalog: the record left memory while parked (dropped, expired, evicted); stop. */
    enum Dropped implements Command {
        INSTANCE
    }

    private record CopyFinished(Throwable failure) implements Command {
    }

    private record WriteAnswered(int attempt, Store.WriteReply reply) implements Command {
    }

    private record PoolAnswered(Store.WriteReply reply) implements Command {
    }

    /**
     * Where a record is written: the durable store (the disk, or the pool on a node without a disk; null on a
     * memory-only node), and the pool besides when the durable store is a disk (null otherwise).
     */
    record Stores(ActorRef<Store.Command> durable, ActorRef<Store.Command> pool) {
    }

    private enum LeaseEnded implements Command {
        INSTANCE
    }

    private RecordActor() {
    }

    /**
     * The behaviour of a publication of {@code spec} from {@code snapshot}. With a positive {@code patience} it
     * waits in line for slots that long (the caller's snapshot lease) and is then abandoned; with zero it is told
     * {@code Retry(no_space)} at once when no slots are free. Its trace events carry the publication's
     * {@code correlation}.
     */
    static Behavior<Command> publish(RecordContext records, RecordSpec spec, DevicePlacement snapshot,
                                     Duration patience, SlotPool.LeaseNotice notice,
                                     ActorRef<PublishResult> replyTo, ActorRef<Catalog.Command> catalog,
                                     Stores stores, long correlation) {
        return records.faults().around("RecordActor", Command.class, Behaviors.setup(
                ctx -> start(ctx, records, spec, snapshot, patience, notice, replyTo, catalog, stores, correlation)));
    }

    private static Behavior<Command> start(ActorContext<Command> ctx,
                                           RecordContext records, RecordSpec spec, DevicePlacement snapshot,
                                           Duration patience, SlotPool.LeaseNotice notice,
                                           ActorRef<PublishResult> replyTo, ActorRef<Catalog.Command> catalog,
                                           Stores stores, long correlation) {
        long startNanos = records.clock().getAsLong();
        RecordKey key = spec.key();
        int slots = spec.slots(records.layout());
        boolean waits = patience.isPositive();
        TraceSource origin = TraceSource.of("RecordActor", ctx);
        records.traces().append(key, origin, correlation, "Publish: allocate " + slots + " slots"
                + (waits ? " (waiting up to " + patience.toMillis() + " ms)" : ""), null);
        // The slot pool's replies are part of this protocol: no message adapter to register and remove per record.
        ActorRef<SlotPool.AllocateReply> adapter = ctx.getSelf().narrow();
        // A request that waits is told Queued when it cannot be granted at once; only then does the lease's timer
        // start (for what is left of the patience), so a publication granted at once schedules nothing.
        records.slotPool().tell(new SlotPool.Allocate(key, slots, Purpose.PUBLISH, waits, adapter, notice));
        return new Phase(ctx, records, spec, notice.ticket(), replyTo, catalog, stores, origin, correlation)
                .allocating(snapshot, startNanos, System.nanoTime() + patience.toNanos(), null, false);
    }

    /** The behaviour of a resident dirty record that has no actor yet (restored, or its file went): spill only. */
    static Behavior<Command> resident(RecordContext records, RecordSpec spec,
                                      ActorRef<Catalog.Command> catalog, Stores stores) {
        return records.faults().around("RecordActor", Command.class,
                Behaviors.setup(ctx -> new Phase(ctx, records, spec, 0, null, catalog, stores,
                        TraceSource.of("RecordActor", ctx), 0).parked()));
    }

    /**
     * The states of one record, sharing what they all need; {@code correlation} is its publication's, 0 for a
     * record restored or written again.
     */
    private record Phase(ActorContext<Command> ctx, RecordContext records, RecordSpec spec, long ticket,
                         ActorRef<PublishResult> replyTo, ActorRef<Catalog.Command> catalog,
                         Stores stores, TraceSource origin, long correlation) {

        RecordKey key() {
            return spec.key();
        }

        void trace(String message) {
            records.traces().append(spec.key(), origin, correlation, message, null);
        }

        void trace(String message, String outcome) {
            records.traces().append(spec.key(), origin, correlation, message, outcome);
        }

        /**
         * Waiting for the slot pool's answer; the lease ends at {@code leaseEndNanos} ({@link System#nanoTime}),
         * {@code lease} is its timer once the request is queued.
         */
        Behavior<Command> allocating(DevicePlacement snapshot, long startNanos, long leaseEndNanos,
                                     Cancellable lease, boolean leaseEnded) {
            return Behaviors.receive(Command.class)
                    .onMessage(SlotPool.AllocateReply.class, r -> switch (r) {
                        case SlotPool.Queued q -> {
                            long left = leaseEndNanos - System.nanoTime();
                            if (left <= 0) {
                                ctx.getSelf().tell(LeaseEnded.INSTANCE);
                                yield Behaviors.same();
                            }
                            yield allocating(snapshot, startNanos, leaseEndNanos,
                                    ctx.scheduleOnce(Duration.ofNanos(left), ctx.getSelf(), LeaseEnded.INSTANCE),
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
                        if (leaseEnded) {
                            return Behaviors.same();
                        }
                        records.slotPool().tell(new SlotPool.Cancel(key(), Purpose.PUBLISH, ticket));
                        return allocating(snapshot, startNanos, leaseEndNanos, null, true);
                    })
                    .build();
        }

        private Behavior<Command> abandoned() {
            trace("Abandoned: the snapshot lease ended while waiting for slots",
                    TraceOutcome.abandoned(AbandonReason.NO_SPACE));
            records.metrics().abandoned(AbandonReason.NO_SPACE);
            return ended(new PublishResult.Abandoned(AbandonReason.NO_SPACE.label()));
        }

        private Behavior<Command> ended(PublishResult result) {
            if (!(result instanceof PublishResult.Abandoned)) {
                trace("Publish ended without the record", TraceOutcome.of(result));
            }
            catalog.tell(new Catalog.PublicationEnded(key()));
            records.reply(replyTo, result);
            return Behaviors.stopped();
        }

        private Behavior<Command> startCopy(DevicePlacement snapshot, long startNanos, SlotList slots) {
            // The slot pool told the catalog of the grant before this actor heard of it, so that a crash frees
            // the slots; the catalog learns the copy's completion below, before anything else can fail.
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
            catalog.tell(new Catalog.Leased(key(), slots, copy));
            ctx.pipeToSelf(copy, (v, failure) -> new CopyFinished(failure));
            return Behaviors.receive(Command.class)
                    .onMessage(CopyFinished.class, f -> {
                        if (f.failure() != null) {
                            return failCopy(slots, AbandonReason.COPY_FAILED, f.failure());
                        }
                        trace("Copy D2H done");
                        records.metrics().publishLatency(records.clock().getAsLong() - startNanos);
                        catalog.tell(new Catalog.Resident(spec, slots, bytes, replyTo, ctx.getSelf(), correlation));
                        return stores.durable() == null ? Behaviors.stopped() : parked();
                    })
                    .onMessage(LeaseEnded.class, t -> Behaviors.same())
                    .build();
        }

        private Behavior<Command> failCopy(SlotList slots, AbandonReason reason, Throwable cause) {
            records.slotPool().tell(new SlotPool.Release(slots, false));
            trace("Failed (" + reason.label() + "): " + cause.getMessage(), TraceOutcome.failed(reason));
            records.metrics().abandoned(reason);
            catalog.tell(new Catalog.PublicationEnded(key()));
            records.reply(replyTo, new PublishResult.Failed(reason.label(), String.valueOf(cause.getMessage())));
            return Behaviors.stopped();
        }

        Behavior<Command> parked() {
            return Behaviors.receive(Command.class)
                    .onMessage(Spill.class, s -> spill(s.slots()))
                    .onMessage(Dropped.class, d -> Behaviors.stopped())
                    .onMessage(LeaseEnded.class, t -> Behaviors.same())
                    .build();
        }

        /**
         * Writes to the durable store; with a disk and a pool, retires to the pool at the same time (once, no
         * retry: the pool copy serves other hosts and outlives the disk's, the disk decides whether the record is
         * clean). The slots stay pinned until both have answered.
         */
        private Behavior<Command> spill(SlotList slots) {
            boolean alsoPool = stores.pool() != null;
            if (alsoPool) {
                trace("Retire to the pool started (beside the disk write)");
                ctx.ask(Store.WriteReply.class, stores.pool(), records.writeCheck(),
                        r -> new Store.Write(spec, slots, r), (reply, failure) -> new PoolAnswered(reply));
            }
            return write(slots, 1, alsoPool);
        }

        private Behavior<Command> write(SlotList slots, int attempt, boolean poolPending) {
            trace(attempt == 1 ? "Spill: write started" : "Spill: write retried");
            // An ask per attempt, so a late answer is never taken for another attempt's. When no answer comes in
            // time (the store failed and lost the message, or the disk stalls) the store is asked how the write
            // ended: it answers when a running write finishes, and says so when none is running.
            ctx.ask(Store.WriteReply.class, stores.durable(), records.writeCheck(),
                    r -> new Store.Write(spec, slots, r), (reply, failure) -> new WriteAnswered(attempt, reply));
            return writing(slots, attempt, poolPending);
        }

        private Behavior<Command> writing(SlotList slots, int attempt, boolean poolPending) {
            return Behaviors.receive(Command.class)
                    .onMessage(WriteAnswered.class, w -> w.attempt() != attempt ? Behaviors.same()
                            : w.reply() == null ? settle(attempt) : switch (w.reply()) {
                        case Store.Written ok -> ended(new Catalog.Committed(key(), ok.bytes(), ok.nanos()),
                                poolPending);
                        case Store.NotWritten n -> write(slots, attempt, poolPending); // its request was lost
                        case Store.WriteFailed f when !f.diskFull() && attempt == 1 -> write(slots, 2, poolPending);
                        case Store.WriteFailed f -> {
                            trace("Spill given up: " + f.reason());
                            yield ended(new Catalog.WriteGivenUp(key(), f.diskFull(), f.reason()), poolPending);
                        }
                    })
                    .onMessage(PoolAnswered.class, p -> {
                        poolOutcome(p.reply());
                        return writing(slots, attempt, false);
                    })
                    .onMessage(Dropped.class, d -> Behaviors.same())
                    .onMessage(LeaseEnded.class, t -> Behaviors.same())
                    .build();
        }

        /** Reports the write's outcome to the catalog once the pool has answered too (it reads the same slots). */
        private Behavior<Command> ended(Catalog.Command outcome, boolean poolPending) {
            if (!poolPending) {
                catalog.tell(outcome);
                return Behaviors.stopped();
            }
            return Behaviors.receive(Command.class)
                    .onMessage(PoolAnswered.class, p -> {
                        poolOutcome(p.reply());
                        catalog.tell(outcome);
                        return Behaviors.stopped();
                    })
                    .onMessage(WriteAnswered.class, w -> Behaviors.same())
                    .onMessage(Dropped.class, d -> Behaviors.same())
                    .onMessage(LeaseEnded.class, t -> Behaviors.same())
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
            ctx.ask(Store.WriteReply.class, stores.durable(), records.writeCheck(),
                    r -> new Store.Settle(key(), r), (reply, failure) -> new WriteAnswered(attempt, reply));
            return Behaviors.same();
        }
    }
}
