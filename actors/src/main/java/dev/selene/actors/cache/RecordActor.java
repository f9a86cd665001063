package dev.selene.actors.cache;

import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceOutcome;
import dev.selene.actors.trace.TraceSource;
import dev.selene.actors.value.AbandonReason;
import dev.selene.actors.value.PublishResult;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.CopyPlan;
import dev.selene.transport.gpu.CopyPlans;
import dev.selene.transport.gpu.DevicePlacement;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

import java.util.concurrent.CompletableFuture;

/**
 * The actor that carries records in flight, one at a time, from a publication to at rest: copy it from the GPU
 * snapshot into the slots the catalog granted it (in the message that gives it the record), hand it to the catalog as
 * resident; then, when a durable tier exists, stay until the catalog asks for its spill, write it (retrying a failed
 * write once unless the disk is full; a write to the pool, where it is the durable tier, several times with growing
 * pauses) and report the commit. When its record is at rest — resident on a memory-only
 * node, committed otherwise, or gone — it tells the catalog so in that last report and waits, idle, for the next
 * record the catalog gives it: the catalog keeps a few idle ones, so that a publication costs no actor spawn and stop.
 *
 * <p>Every command about a record carries the {@code generation} the catalog gave that record's assignment, and so
 * does every message the actor sends itself; one from an earlier assignment is ignored. The slots a publication copies
 * into are the catalog's booking, never this actor's: the catalog frees them when the publication fails (after its
 * copy has ended), and the copy is tracked with the node's device transfers as it starts, whose end the catalog awaits
 * before it frees a failed actor's slots. A failure stops the actor (the catalog watches it and releases what its
 * record held).
 */
final class RecordActor extends AbstractBehavior<RecordActor.Command> {

    /** The protocol. */
    sealed interface Command permits Publish, Spill, Dropped, CopyFinished, WriteAnswered, PoolAnswered, WriteAgain {
    }

    /**
     * From the catalog, to an idle actor: publish {@code spec} from {@code snapshot} into {@code slots}, granted by
     * the catalog; {@code generation} is the assignment's. Its trace events carry the publication's
     * {@code correlation}.
     */
    record Publish(RecordSpec spec, DevicePlacement snapshot, long generation, SlotList slots,
                   ActorRef<PublishResult> replyTo, long correlation) implements Command {
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

    /** Time for the next attempt of a write to a remote durable store that failed. */
    private record WriteAgain(long generation, int attempt) implements Command {
    }

    /**
     * Attempts of a write to a remote durable store (the pool, on a node without a disk) before it is given up: a
     * failure there is mostly a manager's pause or restart, so the write is tried again after 0.25, 0.5, 1, 2, 4 and
     * 8 s (about 16 s in all, beyond a manager's pause the pool is built to ride out), the record staying dirty in
     * memory meanwhile.
     */
    static final int REMOTE_WRITE_ATTEMPTS = 7;
    private static final long REMOTE_RETRY_FIRST_MILLIS = 250;

    /**
     * Where a record is written: the durable store (the disk, or the pool on a node without a disk; null on a
     * memory-only node), and the pool besides when the durable store is a disk (null otherwise).
     */
    record Stores(ActorRef<Store.Command> durable, ActorRef<Store.Command> pool, boolean durableIsRemote) {
        /** Stores whose durable one is local (a disk), or none. */
        Stores(ActorRef<Store.Command> durable, ActorRef<Store.Command> pool) {
            this(durable, pool, false);
        }
    }

    /** An idle record actor of a node, reporting to {@code catalog} and writing to {@code stores}. */
    static Behavior<Command> create(RecordContext records, ActorRef<Catalog.Command> catalog, Stores stores) {
        return records.faults().around("RecordActor", Command.class, Behaviors.setup(
                ctx -> new RecordActor(ctx, records, catalog, stores)));
    }

    /** Where the actor is with its record. */
    private enum State {
        /** No record: waiting for the catalog's next one. */
        IDLE,
        /** Copying from the GPU snapshot into its slots. */
        COPYING,
        /** Resident and dirty, waiting for the catalog to ask for its spill. */
        PARKED,
        /** Its write (and, with a disk and a pool, its retirement beside it) under way. */
        WRITING,
        /** Written; waiting for the pool's answer before reporting (it reads the same slots). */
        REPORTING
    }

    private final ActorContext<Command> ctx;
    private final RecordContext records;
    private final ActorRef<Catalog.Command> catalog;
    private final Stores stores;
    private final TraceSource origin;

    // The record being carried: set when an assignment starts, confined to this actor.
    private State state = State.IDLE;
    private long generation;
    private RecordSpec spec;
    private ActorRef<PublishResult> replyTo;
    /** Its publication's correlation; 0 for a record restored or written again. */
    private long correlation;
    private DevicePlacement snapshot;
    private long startNanos;
    private SlotList slots;
    private long bytes;
    private int attempt;
    private boolean poolPending;
    private Catalog.Command outcome;

    private RecordActor(ActorContext<Command> ctx, RecordContext records, ActorRef<Catalog.Command> catalog,
                        Stores stores) {
        super(ctx);
        this.ctx = ctx;
        this.records = records;
        this.catalog = catalog;
        this.stores = stores;
        this.origin = TraceSource.of("RecordActor", ctx);
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder().onMessage(Command.class, this::onCommand).build();
    }

    private Behavior<Command> onCommand(Command command) {
        switch (command) {
            case Publish p -> {
                if (state == State.IDLE) {
                    onPublish(p);
                }
            }
            case Spill s -> {
                if (state == State.IDLE) {
                    begin(s.generation(), s.spec(), null, 0);
                    spill(s.slots());
                } else if (state == State.PARKED && s.generation() == generation) {
                    spill(s.slots());
                }
            }
            case Dropped d -> {
                if (state == State.PARKED && d.generation() == generation) {
                    toIdle(new Catalog.Released(ctx.getSelf()));
                }
            }
            case CopyFinished f -> {
                if (state == State.COPYING && f.generation() == generation) {
                    onCopyFinished(f.failure());
                }
            }
            case WriteAnswered a -> {
                if (state == State.WRITING && a.generation() == generation && a.attempt() == attempt) {
                    onWriteAnswered(a.reply());
                }
            }
            case WriteAgain w -> {
                if (state == State.WRITING && w.generation() == generation && w.attempt() == attempt + 1) {
                    write(w.attempt());
                }
            }
            case PoolAnswered p -> {
                if ((state == State.WRITING || state == State.REPORTING) && p.generation() == generation
                        && poolPending) {
                    onPoolAnswered(p.reply());
                }
            }
        }
        return this;
    }

    private void begin(long generation, RecordSpec spec, ActorRef<PublishResult> replyTo, long correlation) {
        this.generation = generation;
        this.spec = spec;
        this.replyTo = replyTo;
        this.correlation = correlation;
    }

    /** The record is at rest (or gone): the catalog hears {@code report} and the actor waits for the next one. */
    private void toIdle(Catalog.Command report) {
        catalog.tell(report);
        state = State.IDLE;
        spec = null;
        replyTo = null;
        snapshot = null;
        slots = null;
        outcome = null;
    }

    private void trace(String message) {
        records.traces().append(spec.key(), origin, correlation, message, null);
    }

    private void trace(String message, String outcome) {
        records.traces().append(spec.key(), origin, correlation, message, outcome);
    }

    // ---- publication ----

    private void onPublish(Publish p) {
        begin(p.generation(), p.spec(), p.replyTo(), p.correlation());
        startNanos = records.clock().getAsLong();
        snapshot = p.snapshot();
        startCopy(p.slots());
    }

    private void startCopy(SlotList granted) {
        // The catalog booked the slots before this actor heard of them, so that a crash frees them; the copy is
        // tracked with the node's device transfers, whose end the catalog awaits before it frees the slots of an
        // actor that failed.
        CompletableFuture<Void> copy;
        try {
            CopyPlan plan = CopyPlans.forRecord(records.layout(), records.host(), granted, snapshot, spec.hasRow());
            bytes = plan.totalBytes();
            copy = records.transfers().track(records.copier().copyToHost(plan));
        } catch (RuntimeException e) {
            failCopy(AbandonReason.BAD_SNAPSHOT, e);
            return;
        }
        slots = granted;
        snapshot = null;
        state = State.COPYING;
        records.traces().append(spec.key(), origin, correlation, "Copy D2H started: {} bytes", bytes, null);
        long g = generation;
        ctx.pipeToSelf(Piped.nonNull(copy), (v, failure) -> new CopyFinished(g, failure));
    }

    private void onCopyFinished(Throwable failure) {
        if (failure != null) {
            failCopy(AbandonReason.COPY_FAILED, failure);
            return;
        }
        trace("Copy D2H done");
        records.metrics().publishLatency(records.clock().getAsLong() - startNanos);
        Catalog.Resident resident = new Catalog.Resident(spec, slots, bytes, replyTo, ctx.getSelf(), correlation);
        if (stores.durable() == null) {
            toIdle(resident);
        } else {
            catalog.tell(resident);
            replyTo = null;
            state = State.PARKED;
        }
    }

    private void failCopy(AbandonReason reason, Throwable cause) {
        trace("Failed (" + reason.label() + "): " + cause.getMessage(), TraceOutcome.failed(reason));
        records.metrics().abandoned(reason);
        ActorRef<PublishResult> publisher = replyTo;
        toIdle(new Catalog.PublicationEnded(spec.key(), ctx.getSelf()));
        records.reply(publisher, new PublishResult.Failed(reason.label(), String.valueOf(cause.getMessage())));
    }

    // ---- spill ----

    /**
     * Writes to the durable store; with a disk and a pool, retires to the pool at the same time (once, no retry: the
     * pool copy serves other hosts and outlives the disk's, the disk decides whether the record is clean). The slots
     * stay pinned until both have answered.
     */
    private void spill(SlotList pinned) {
        slots = pinned;
        state = State.WRITING;
        poolPending = stores.pool() != null;
        if (poolPending) {
            trace("Retire to the pool started (beside the disk write)");
            RecordSpec s = spec;
            long g = generation;
            ctx.ask(Store.WriteReply.class, stores.pool(), records.writeCheck(), r -> new Store.Write(s, pinned, r),
                    (reply, failure) -> new PoolAnswered(g, reply));
        }
        write(1);
    }

    private void write(int attempt) {
        this.attempt = attempt;
        trace(attempt == 1 ? "Spill: write started" : "Spill: write retried");
        // An ask per attempt, so a late answer is never taken for another attempt's. When no answer comes in time
        // (the store failed and lost the message, or the disk stalls) the store is asked how the write ended: it
        // answers when a running write finishes, and says so when none is running.
        RecordSpec s = spec;
        SlotList pinned = slots;
        long g = generation;
        ctx.ask(Store.WriteReply.class, stores.durable(), records.writeCheck(), r -> new Store.Write(s, pinned, r),
                (reply, failure) -> new WriteAnswered(g, attempt, reply));
    }

    private void onWriteAnswered(Store.WriteReply reply) {
        if (reply == null) {
            settle();
            return;
        }
        switch (reply) {
            case Store.Written ok -> report(new Catalog.Committed(spec.key(), ok.bytes(), ok.nanos(), ctx.getSelf()));
            case Store.NotWritten n -> write(attempt); // its request was lost
            case Store.WriteFailed f when stores.durableIsRemote() && attempt < REMOTE_WRITE_ATTEMPTS -> {
                long delay = REMOTE_RETRY_FIRST_MILLIS << (attempt - 1);
                trace("Spill failed (" + f.reason() + "): trying again in " + delay + " ms");
                ctx.scheduleOnce(java.time.Duration.ofMillis(delay), ctx.getSelf(),
                        new WriteAgain(generation, attempt + 1));
            }
            case Store.WriteFailed f when !f.diskFull() && attempt == 1 && !stores.durableIsRemote() -> write(2);
            case Store.WriteFailed f -> {
                trace("Spill given up: " + f.reason());
                report(new Catalog.WriteGivenUp(spec.key(), f.diskFull(), f.reason(), ctx.getSelf()));
            }
        }
    }

    private void settle() {
        trace("No answer from the store: asking how the write ended");
        RecordKey key = spec.key();
        long g = generation;
        int a = attempt;
        ctx.ask(Store.WriteReply.class, stores.durable(), records.writeCheck(), r -> new Store.Settle(key, r),
                (reply, failure) -> new WriteAnswered(g, a, reply));
    }

    /** Reports the write's outcome to the catalog once the pool has answered too (it reads the same slots). */
    private void report(Catalog.Command writeOutcome) {
        if (poolPending) {
            outcome = writeOutcome;
            state = State.REPORTING;
        } else {
            toIdle(writeOutcome);
        }
    }

    private void onPoolAnswered(Store.WriteReply reply) {
        poolPending = false;
        if (reply instanceof Store.Written) {
            trace("Retired to the pool", TraceOutcome.RETIRED);
        } else {
            trace("Not retired to the pool: " + (reply == null ? "no answer in time"
                    : reply instanceof Store.WriteFailed f ? f.reason() : "it was not written"));
        }
        if (state == State.REPORTING) {
            toIdle(outcome);
        }
    }
}
