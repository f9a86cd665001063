package dev.selene.actors.slots;

import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;

import java.util.List;

/**
 * Owns the host slot pool: who holds which slots, and how many are free, clean or kept as intake (B1-B3).
 *
 * <p>An allocation that would eat into the intake first asks the evictor (the memory tier) to drop the coldest
 * clean records, and waits for its answer with later allocations stashed so that they are served in order.
 * Whenever free plus clean slots fall below two intakes it tells the pressure listener (the spill scheduler,
 * when there is one) how many slots it is short (B4).
 */
public final class SlotPool extends AbstractBehavior<SlotPool.Command> {

    /** The protocol. */
    public sealed interface Command {
    }

    /** Asks for {@code slots} slots for {@code key}. */
    public record Allocate(RecordKey key, int slots, Purpose purpose, ActorRef<AllocateReply> replyTo)
            implements Command {
    }

    /** Returns a record's slots; {@code clean} when they were counted clean. */
    public record Release(SlotList slots, boolean clean) implements Command {
    }

    /** The clean count changed by {@code delta} slots (records became droppable or stopped being so). */
    public record CleanChanged(int delta) implements Command {
    }

    /** The evictor's answer to {@link Evict}: the slots of the clean records it dropped. */
    public record Evicted(List<SlotList> dropped) implements Command {
    }

    /** Sets who drops clean records on demand and who is told about pressure. */
    public record Attach(ActorRef<Evict> evictor, ActorRef<Pressure> pressureListener) implements Command {
    }

    /** Asks for the accounting figures. */
    public record GetStats(ActorRef<Stats> replyTo) implements Command {
    }

    /** Sent to the evictor: drop clean records worth at least {@code slots} slots, coldest first. */
    public record Evict(int slots, ActorRef<Command> replyTo) {
    }

    /** Sent to the pressure listener: free plus clean is {@code deficitSlots} below two intakes. */
    public record Pressure(int deficitSlots, int freeSlots, int cleanSlots, int intakeSlots) {
    }

    /** Replies to {@link Allocate}. */
    public sealed interface AllocateReply {
    }

    /** The slots granted, in record order. */
    public record Allocated(SlotList slots) implements AllocateReply {
    }

    /** Not enough free slots even after dropping clean records. */
    public record Short(int missingSlots) implements AllocateReply {
    }

    /** The request can never be granted (B5). */
    public record Oversize(int slots, int maxSlots) implements AllocateReply {
    }

    /** The accounting figures. */
    public record Stats(int total, int intake, int free, int clean) {
    }

    /** On-demand eviction drops at least {@code intake / EVICTION_BATCH_DIVISOR} clean slots at a time. */
    static final int EVICTION_BATCH_DIVISOR = 8;

    /** A waiting publication that has not asked again for this long has been given up by its caller. */
    static final long WAITER_TIMEOUT_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(100);

    private final java.util.LinkedHashMap<RecordKey, long[]> waiters = new java.util.LinkedHashMap<>();
    private final SlotAccounting accounting;
    private final TraceBook traces;
    private final StashBuffer<Command> stash;
    private ActorRef<Evict> evictor;
    private ActorRef<Pressure> pressureListener;
    private Allocate waiting;
    private int lastPressureDeficit;

    /** A pool of {@code total} slots keeping {@code intake} free when it can. */
    public static Behavior<Command> create(int total, int intake, TraceBook traces) {
        return Behaviors.withStash(1 << 16, stash -> Behaviors.setup(
                ctx -> new SlotPool(ctx, new SlotAccounting(total, intake), traces, stash)));
    }

    private SlotPool(ActorContext<Command> ctx, SlotAccounting accounting, TraceBook traces,
                     StashBuffer<Command> stash) {
        super(ctx);
        this.accounting = accounting;
        this.traces = traces;
        this.stash = stash;
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Command.class, this::onCommand)
                .build();
    }

    private Behavior<Command> onCommand(Command command) {
        switch (command) {
            case Allocate a -> onAllocate(a);
            case Release r -> onRelease(r);
            case CleanChanged c -> onCleanChanged(c);
            case Evicted e -> onEvicted(e);
            case Attach a -> onAttach(a);
            case GetStats g -> g.replyTo().tell(stats());
        }
        return this;
    }

    private void onAllocate(Allocate a) {
        if (waiting != null) {
            stash.stash(a);
            return;
        }
        if (!accounting.fits(a.slots(), a.purpose())) {
            int max = SlotAccounting.maxGrant(accounting.total(), accounting.intake(), a.purpose());
            traces.append(a.key(), "SlotPool", "Oversize " + a.slots() + " > " + max + " slots");
            a.replyTo().tell(new Oversize(a.slots(), max));
            return;
        }
        int evict = accounting.evictionWanted(a.slots() + slotsAhead(a));
        if (evict > 0) {
            // Evict in batches of an eighth of the intake: each eviction is a round trip to the memory tier during
            // which later allocations wait, so one per record would idle the copy engine under a full warm tier.
            evict = Math.min(accounting.clean(), Math.max(evict, accounting.intake() / EVICTION_BATCH_DIVISOR));
        }
        if (evict > 0 && evictor != null) {
            waiting = a;
            traces.append(a.key(), "SlotPool", "Evict " + evict + " clean slots before allocating");
            evictor.tell(new Evict(evict, getContext().getSelf()));
            return;
        }
        grant(a);
    }

    /**
     * Slots that publications told {@code Short} before {@code a} are owed first: freed slots go to the oldest
     * waiting publication, so under sustained pressure none is starved until its snapshot must be given up.
     */
    private int slotsAhead(Allocate a) {
        if (a.purpose() != Purpose.PUBLISH || waiters.isEmpty()) {
            return 0;
        }
        long now = System.nanoTime();
        waiters.values().removeIf(w -> now - w[1] > WAITER_TIMEOUT_NANOS);
        int ahead = 0;
        for (var e : waiters.entrySet()) {
            if (e.getKey().equals(a.key())) {
                break;
            }
            ahead += (int) e.getValue()[0];
        }
        return ahead;
    }

    private void grant(Allocate a) {
        int ahead = slotsAhead(a);
        int missing = accounting.shortBy(a.slots() + ahead, a.purpose());
        if (missing > 0) {
            traces.append(a.key(), "SlotPool", "Short " + missing + " slots (free " + accounting.free() + ", "
                    + ahead + " owed to older publications)");
            if (a.purpose() == Purpose.PUBLISH) {
                long[] w = waiters.computeIfAbsent(a.key(), k -> new long[] {a.slots(), 0});
                w[1] = System.nanoTime();
            }
            a.replyTo().tell(new Short(missing));
            lastPressureDeficit = -1; // an allocation is failing: remind the listener even if nothing changed
        } else {
            waiters.remove(a.key());
            SlotList slots = accounting.allocate(a.slots());
            traces.append(a.key(), "SlotPool", "Allocated " + slots);
            a.replyTo().tell(new Allocated(slots));
        }
        checkPressure();
    }

    private void onEvicted(Evicted e) {
        for (SlotList s : e.dropped()) {
            accounting.removeClean(s.count());
            accounting.release(s);
        }
        Allocate a = waiting;
        waiting = null;
        if (a != null) {
            grant(a);
        }
        stash.unstashAll(this);
    }

    private void onRelease(Release r) {
        if (r.clean()) {
            accounting.removeClean(r.slots().count());
        }
        accounting.release(r.slots());
        checkPressure();
    }

    private void onCleanChanged(CleanChanged c) {
        if (c.delta() >= 0) {
            accounting.addClean(c.delta());
        } else {
            accounting.removeClean(-c.delta());
        }
        checkPressure();
    }

    private void onAttach(Attach a) {
        if (a.evictor() != null) {
            this.evictor = a.evictor();
        }
        if (a.pressureListener() != null) {
            this.pressureListener = a.pressureListener();
            lastPressureDeficit = -1;
            checkPressure();
        }
    }

    private void checkPressure() {
        int deficit = accounting.pressureDeficit();
        // Every change is reported, the return to zero included, so the listener never acts on a stale target.
        if (pressureListener != null && deficit != lastPressureDeficit) {
            pressureListener.tell(new Pressure(deficit, accounting.free(), accounting.clean(), accounting.intake()));
        }
        lastPressureDeficit = deficit;
    }

    private Stats stats() {
        return new Stats(accounting.total(), accounting.intake(), accounting.free(), accounting.clean());
    }
}
