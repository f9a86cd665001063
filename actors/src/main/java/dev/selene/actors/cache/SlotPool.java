package dev.selene.actors.cache;

import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.trace.TraceSource;
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

import java.util.ArrayDeque;
import java.util.List;

/**
 * Owns the host slot pool: who holds which slots, and how many are free, clean or kept as intake (one slot pool to keeping the intake free).
 *
 * <p>Requests wait in arrival order, one queue per purpose (publications first), and are granted by message as
 * slots free up; a request that may not wait is told {@code Short} at once. Before a grant would eat into the
 * intake the evictor (the catalog) is asked to drop the coldest clean records, and later grants wait for its
 * answer so they are served in order. Whenever free plus clean slots fall below two intakes, or a request waits,
 * the pressure listener (the catalog) is told how many slots are missing (pressure spill). A waiting requester that gives up
 * sends {@link Cancel}; the pool never reads a clock.
 */
final class SlotPool extends AbstractBehavior<SlotPool.Command> {

    /** The protocol. */
    sealed interface Command {
    }

    /**
     * Asks for {@code slots} slots for {@code key}; with {@code waits} the request queues until granted or
     * cancelled, otherwise it is told {@code Short} when it cannot be granted now.
     */
    record Allocate(RecordKey key, int slots, Purpose purpose, boolean waits, ActorRef<AllocateReply> replyTo,
                    LeaseNotice notice, long request, boolean tellsQueued) implements Command {
        /** A request whose grant is told to its requester only, cancellable by {@code request}. */
        Allocate(RecordKey key, int slots, Purpose purpose, boolean waits, ActorRef<AllocateReply> replyTo,
                 long request) {
            this(key, slots, purpose, waits, replyTo, null, request, false);
        }

        /**
         * A request whose grant is also told to the notice's owner, cancellable by the notice's ticket; a request
         * that waits is told {@link Queued} when it cannot be granted at once (so that its requester starts its
         * clock only then).
         */
        Allocate(RecordKey key, int slots, Purpose purpose, boolean waits, ActorRef<AllocateReply> replyTo,
                 LeaseNotice notice) {
            this(key, slots, purpose, waits, replyTo, notice, notice.ticket(), waits);
        }

        /** A request that is never cancelled. */
        Allocate(RecordKey key, int slots, Purpose purpose, boolean waits, ActorRef<AllocateReply> replyTo) {
            this(key, slots, purpose, waits, replyTo, null, 0, false);
        }
    }

    /**
     * Who else is told of a grant, before the requester is: the owner of the requester, so that slots granted to a
     * requester that failed (or fails before it reports them) are released, never lost. {@code ticket} tells
     * requests of the same key apart.
     */
    record LeaseNotice(long ticket, ActorRef<Granted> to) {
    }

    /** Sent to a {@link LeaseNotice}'s owner: {@code slots} were granted to the request {@code ticket}. */
    record Granted(RecordKey key, long ticket, SlotList slots) {
    }

    /**
     * The requester of the waiting {@link Allocate} {@code request} for {@code key} gives up; it is told
     * {@code Cancelled}. Another requester's request for the same key is left alone.
     */
    record Cancel(RecordKey key, Purpose purpose, long request) implements Command {
    }

    /**
     * Checks the accounting (and, when {@code expectedClean} is not negative, that the clean count is the one the
     * catalog last pushed); replies with the first broken invariant, or an empty string.
     */
    record CheckInvariants(long expectedClean, ActorRef<String> replyTo) implements Command {
    }

    /** Returns a record's slots; {@code clean} when they were counted clean. */
    record Release(SlotList slots, boolean clean) implements Command {
    }

    /** The clean count changed by {@code delta} slots (records became droppable or stopped being so). */
    record CleanChanged(int delta) implements Command {
    }

    /** The evictor's answer to {@link Evict}: the slots of the clean records it dropped. */
    record Evicted(List<SlotList> dropped) implements Command {
    }

    /** Sets who drops clean records on demand and who is told about pressure. */
    record Attach(ActorRef<Evict> evictor, ActorRef<Pressure> pressureListener) implements Command {
    }

    /** Asks for the accounting figures. */
    record GetStats(ActorRef<Stats> replyTo) implements Command {
    }

    /** Sent to the evictor: drop clean records worth at least {@code slots} slots, coldest first. */
    record Evict(int slots, ActorRef<Command> replyTo) {
    }

    /** Sent to the pressure listener: free plus clean is {@code deficitSlots} below two intakes plus what waits. */
    record Pressure(int deficitSlots, int freeSlots, int cleanSlots, int intakeSlots) {
    }

    /** Replies to {@link Allocate}; a record actor takes them as its own messages (it asks for no adapter). */
    sealed interface AllocateReply extends RecordActor.Command {
    }

    /** The slots granted, in record order. */
    record Allocated(SlotList slots) implements AllocateReply {
    }

    /** Not enough free slots even after dropping clean records (only to requests that may not wait). */
    record Short(int missingSlots) implements AllocateReply {
    }

    /** The request can never be granted (oversize). */
    record Oversize(int slots, int maxSlots) implements AllocateReply {
    }

    /** The waiting request was cancelled by its requester; nothing was granted. */
    record Cancelled() implements AllocateReply {
    }

    /**
     * The request waits in line: it could not be granted at once (told only to requests that ask for it, before
     * their {@link Allocated} or {@link Cancelled}).
     */
    record Queued() implements AllocateReply {
    }

    /** The accounting figures. */
    record Stats(int total, int intake, int free, int clean, int waiting) {
    }

    /** On-demand eviction drops at least {@code intake / EVICTION_BATCH_DIVISOR} clean slots at a time. */
    static final int EVICTION_BATCH_DIVISOR = 8;

    private final SlotAccounting accounting;
    private final CacheMetrics metrics;
    private final TraceBook traces;
    private final TraceSource origin;
    private final FaultInjection faults;
    private final ArrayDeque<Allocate> publications = new ArrayDeque<>();
    private final ArrayDeque<Allocate> staging = new ArrayDeque<>();
    private ActorRef<Evict> evictor;
    private ActorRef<Pressure> pressureListener;
    private boolean evicting;
    private int lastPressureDeficit;

    /** A pool of {@code total} slots keeping {@code intake} free when it can. */
    static Behavior<Command> create(int total, int intake, CacheMetrics metrics, TraceBook traces) {
        return create(total, intake, metrics, traces, FaultInjection.NONE);
    }

    /** A pool whose messages are first shown to {@code faults} (tests inject failures through it). */
    static Behavior<Command> create(int total, int intake, CacheMetrics metrics, TraceBook traces,
                                    FaultInjection faults) {
        return Behaviors.setup(ctx -> new SlotPool(ctx, new SlotAccounting(total, intake), metrics, traces, faults));
    }

    private SlotPool(ActorContext<Command> ctx, SlotAccounting accounting, CacheMetrics metrics, TraceBook traces,
                     FaultInjection faults) {
        super(ctx);
        this.origin = TraceSource.of("SlotPool", ctx);
        this.accounting = accounting;
        this.metrics = metrics;
        this.traces = traces;
        this.faults = faults;
        updateGauges();
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Command.class, this::onCommand)
                .build();
    }

    private Behavior<Command> onCommand(Command command) {
        faults.beforeHandling("SlotPool", command);
        switch (command) {
            case Allocate a -> onAllocate(a);
            case Cancel c -> onCancel(c);
            case CheckInvariants c -> c.replyTo().tell(invariantViolation(c.expectedClean()));
            case Release r -> onRelease(r);
            case CleanChanged c -> onCleanChanged(c);
            case Evicted e -> onEvicted(e);
            case Attach a -> onAttach(a);
            case GetStats g -> g.replyTo().tell(stats());
        }
        updateGauges();
        return this;
    }

    private void updateGauges() {
        metrics.slots(accounting.total(), accounting.intake(), accounting.free(), accounting.clean());
    }

    private void onAllocate(Allocate a) {
        if (!accounting.fits(a.slots(), a.purpose())) {
            int max = SlotAccounting.maxGrant(accounting.total(), accounting.intake(), a.purpose());
            traces.append(a.key(), origin, "Oversize " + a.slots() + " > " + max + " slots");
            a.replyTo().tell(new Oversize(a.slots(), max));
            return;
        }
        if (!a.waits() && !queue(a.purpose()).isEmpty()) {
            // Others wait ahead of it: a request that may not wait is answered now, never queued behind them.
            int missing = Math.max(1, accounting.shortBy(a.slots() + waitingSlots(), a.purpose()));
            traces.append(a.key(), origin, "Short " + missing + " slots (others wait ahead)");
            a.replyTo().tell(new Short(missing));
            lastPressureDeficit = -1;
            checkPressure();
            return;
        }
        ArrayDeque<Allocate> queue = queue(a.purpose());
        queue.addLast(a);
        serve();
        if (a.tellsQueued() && queue.peekLast() == a) {
            a.replyTo().tell(new Queued());
        }
    }

    private void onCancel(Cancel c) {
        var it = queue(c.purpose()).iterator();
        while (it.hasNext()) {
            Allocate a = it.next();
            if (a.key().equals(c.key()) && a.request() == c.request()) {
                it.remove();
                traces.append(a.key(), origin, "Cancelled while waiting");
                a.replyTo().tell(new Cancelled());
                break;
            }
        }
        serve();
    }

    private ArrayDeque<Allocate> queue(Purpose purpose) {
        return purpose == Purpose.PUBLISH ? publications : staging;
    }

    /**
     * Grants what can be granted, oldest first, publications before staging; asks the evictor first when a grant
     * would eat into the intake and clean records exist.
     */
    private void serve() {
        while (!evicting) {
            Allocate a = !publications.isEmpty() ? publications.peekFirst() : staging.peekFirst();
            if (a == null) {
                break;
            }
            int evict = accounting.evictionWanted(a.slots());
            if (evict > 0 && evictor != null && accounting.clean() > 0) {
                // Evict in batches of an eighth of the intake: each eviction is a round trip to the catalog during
                // which grants wait, so one per record would idle the copy engine under a full warm tier.
                evict = Math.min(accounting.clean(), Math.max(evict, accounting.intake() / EVICTION_BATCH_DIVISOR));
                evicting = true;
                traces.append(a.key(), origin, 0, "Evict {} clean slots before allocating", evict, null);
                evictor.tell(new Evict(evict, getContext().getSelf()));
                break;
            }
            int missing = accounting.shortBy(a.slots(), a.purpose());
            if (missing == 0) {
                queue(a.purpose()).pollFirst();
                SlotList slots = accounting.allocate(a.slots());
                traces.append(a.key(), origin, 0, "Allocated {}", slots, null);
                if (a.notice() != null) {
                    a.notice().to().tell(new Granted(a.key(), a.notice().ticket(), slots));
                }
                a.replyTo().tell(new Allocated(slots));
                continue;
            }
            if (!a.waits()) {
                queue(a.purpose()).pollFirst();
                traces.append(a.key(), origin, "Short " + missing + " slots (free " + accounting.free() + ")");
                a.replyTo().tell(new Short(missing));
                lastPressureDeficit = -1; // an allocation is failing: remind the listener even if nothing changed
                continue;
            }
            if (a.purpose() == Purpose.STAGING && !publications.isEmpty()) {
                break;
            }
            if (a.purpose() == Purpose.PUBLISH && !staging.isEmpty()
                    && accounting.shortBy(staging.peekFirst().slots(), Purpose.STAGING) == 0) {
                // A waiting publication does not hold back a restore whose staging fits now.
                Allocate s = staging.pollFirst();
                SlotList slots = accounting.allocate(s.slots());
                traces.append(s.key(), origin, 0, "Allocated {} for staging", slots, null);
                s.replyTo().tell(new Allocated(slots));
                continue;
            }
            break;
        }
        checkPressure();
    }

    private void onEvicted(Evicted e) {
        for (SlotList s : e.dropped()) {
            accounting.removeClean(s.count());
            accounting.release(s);
        }
        evicting = false;
        serve();
    }

    private void onRelease(Release r) {
        if (r.clean()) {
            accounting.removeClean(r.slots().count());
        }
        accounting.release(r.slots());
        serve();
    }

    private void onCleanChanged(CleanChanged c) {
        if (c.delta() >= 0) {
            accounting.addClean(c.delta());
        } else {
            accounting.removeClean(-c.delta());
        }
        serve();
    }

    private void onAttach(Attach a) {
        if (a.evictor() != null) {
            this.evictor = a.evictor();
        }
        if (a.pressureListener() != null) {
            this.pressureListener = a.pressureListener();
            lastPressureDeficit = -1;
        }
        serve();
    }

    private int waitingSlots() {
        int n = 0;
        for (Allocate a : publications) {
            n += a.slots();
        }
        for (Allocate a : staging) {
            n += a.slots();
        }
        return n;
    }

    private void checkPressure() {
        int waiting = publications.isEmpty() && staging.isEmpty() ? 0 : waitingSlots();
        int deficit = accounting.pressureDeficit() + waiting;
        // Every change is reported, the return to zero included, so the listener never acts on a stale target.
        if (pressureListener != null && deficit != lastPressureDeficit) {
            pressureListener.tell(new Pressure(deficit, accounting.free(), accounting.clean(), accounting.intake()));
        }
        lastPressureDeficit = deficit;
    }

    private String invariantViolation(long expectedClean) {
        try {
            accounting.checkInvariants();
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
        if (expectedClean >= 0 && accounting.clean() != expectedClean) {
            return "the slot pool counts " + accounting.clean() + " clean slots, the catalog " + expectedClean;
        }
        return "";
    }

    private Stats stats() {
        return new Stats(accounting.total(), accounting.intake(), accounting.free(), accounting.clean(),
                publications.size() + staging.size());
    }
}
