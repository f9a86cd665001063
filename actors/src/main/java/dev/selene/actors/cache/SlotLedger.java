package dev.selene.actors.cache;

import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.trace.TraceSource;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;

import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;

/**
 * The host slots of a node, kept by the catalog (a plain object confined to the catalog actor, no locks): the free
 * list, and the requests waiting in line for slots, one queue per purpose (publications first).
 *
 * <p>A request is granted as soon as it fits, oldest first; a request that may not wait is refused at once when it
 * cannot be granted. Before a grant would eat into the intake, the coldest clean records are dropped through the
 * {@code evictor} (in batches of an eighth of the intake); the clean count is the catalog's own, read through
 * {@code clean}, never copied here. Whenever free plus clean slots fall below two intakes, or a request waits, the
 * pressure (how many slots are missing) changes, and {@link #takePressure} says so once per change.
 */
final class SlotLedger {

    /**
     * A request for {@code slots} slots for {@code key}; {@code id} tells requests for the same key apart (a
     * publication's ticket, a restore's staging request). {@code granted} takes the slots when they are granted,
     * at once or later; {@code cancelled} runs when it is cancelled while waiting. Its trace events carry
     * {@code correlation} (0: the record's latest).
     */
    record Allocation(RecordKey key, int slots, Purpose purpose, boolean waits, long id, long correlation,
                      Consumer<SlotList> granted, Runnable cancelled) {
    }

    /** What became of a request at once. */
    enum Answer {
        /** Granted: its {@code granted} has taken the slots. */
        GRANTED,
        /** It waits in line; {@code granted} takes the slots later, unless it is cancelled. */
        QUEUED,
        /** Not enough free slots even after dropping clean records (only for requests that may not wait). */
        SHORT,
        /** It can never be granted: more slots than the pool can give for its purpose. */
        OVERSIZE
    }

    /** Free plus clean is {@code deficitSlots} below two intakes plus what waits. */
    record Pressure(int deficitSlots, int freeSlots, int cleanSlots, int intakeSlots) {
    }

    /** The figures the status and the gauges report. */
    record Stats(int total, int intake, int free, int clean, int waiting) {
    }

    /** On-demand eviction drops at least {@code intake / EVICTION_BATCH_DIVISOR} clean slots at a time. */
    static final int EVICTION_BATCH_DIVISOR = 8;

    private final SlotAccounting accounting;
    private final LongSupplier clean;
    private final IntFunction<List<SlotList>> evictor;
    private final TraceBook traces;
    private final TraceSource origin;
    private final FaultInjection faults;
    private final ArrayDeque<Allocation> publications = new ArrayDeque<>();
    private final ArrayDeque<Allocation> staging = new ArrayDeque<>();
    private int waitingSlots;
    private int lastPressureDeficit = -1;
    /** The request that {@link #serve} refused for want of slots: only ever the one {@link #request} is asking. */
    private Allocation refused;

    /**
     * A pool of {@code total} slots keeping {@code intake} free when it can; {@code clean} counts the slots of
     * droppable records and {@code evictor} drops the coldest of them, worth at least the slots asked, and returns
     * their slots. Requests are first shown to {@code faults} (tests inject failures through it).
     */
    SlotLedger(int total, int intake, LongSupplier clean, IntFunction<List<SlotList>> evictor, TraceBook traces,
               TraceSource origin, FaultInjection faults) {
        this.accounting = new SlotAccounting(total, intake);
        this.clean = clean;
        this.evictor = evictor;
        this.traces = traces;
        this.origin = origin;
        this.faults = faults;
    }

    /** Asks for slots; see {@link Answer}. A grant made at once is given to the request's {@code granted} first. */
    Answer request(Allocation a) {
        faults.beforeHandling("SlotLedger", a);
        if (!accounting.fits(a.slots(), a.purpose())) {
            traces.append(a.key(), origin, "Oversize " + a.slots() + " > " + maxGrant(a.purpose()) + " slots");
            return Answer.OVERSIZE;
        }
        if (!a.waits() && !queue(a.purpose()).isEmpty()) {
            // Others wait ahead of it: a request that may not wait is answered now, never queued behind them.
            int missing = Math.max(1, accounting.shortBy(a.slots() + waitingSlots, a.purpose()));
            traces.append(a.key(), origin, "Short " + missing + " slots (others wait ahead)");
            lastPressureDeficit = -1; // an allocation is failing: report the pressure even if nothing changed
            return Answer.SHORT;
        }
        ArrayDeque<Allocation> queue = queue(a.purpose());
        queue.addLast(a);
        waitingSlots += a.slots();
        serve();
        if (refused == a) {
            refused = null;
            return Answer.SHORT;
        }
        return queue.peekLast() == a ? Answer.QUEUED : Answer.GRANTED;
    }

    /** The waiting request {@code id} for {@code key} gives up; false when it waits no longer (granted). */
    boolean cancel(RecordKey key, Purpose purpose, long id) {
        var it = queue(purpose).iterator();
        while (it.hasNext()) {
            Allocation a = it.next();
            if (a.key().equals(key) && a.id() == id) {
                it.remove();
                waitingSlots -= a.slots();
                traces.append(a.key(), origin, "Cancelled while waiting");
                a.cancelled().run();
                serve();
                return true;
            }
        }
        return false;
    }

    /** Returns a record's slots to the free list, and grants what now fits. */
    void release(SlotList slots) {
        accounting.release(slots);
        serve();
    }

    /** Grants what now fits (the clean count may have grown, so the intake can be kept free). */
    void serve() {
        boolean dry = false;
        while (true) {
            Allocation a = !publications.isEmpty() ? publications.peekFirst() : staging.peekFirst();
            if (a == null) {
                break;
            }
            int cleanNow = cleanSlots();
            int evict = Math.clamp((long) a.slots() + accounting.intake() - accounting.free(), 0, cleanNow);
            if (evict > 0 && !dry) {
                // Evict in batches of an eighth of the intake, so that a full warm tier does not drop one record
                // per grant.
                evict = Math.min(cleanNow, Math.max(evict, accounting.intake() / EVICTION_BATCH_DIVISOR));
                traces.append(a.key(), origin, 0, "Evict {} clean slots before allocating", evict, null);
                List<SlotList> dropped = evictor.apply(evict);
                for (SlotList s : dropped) {
                    accounting.release(s);
                }
                dry = dropped.isEmpty(); // nothing droppable after all: do not ask again in this pass
                continue;
            }
            int missing = accounting.shortBy(a.slots(), a.purpose());
            if (missing == 0) {
                take(a);
                continue;
            }
            if (!a.waits()) {
                take(a, null);
                traces.append(a.key(), origin, "Short " + missing + " slots (free " + accounting.free() + ")");
                refused = a;
                lastPressureDeficit = -1; // an allocation is failing: report the pressure even if nothing changed
                continue;
            }
            if (a.purpose() == Purpose.STAGING && !publications.isEmpty()) {
                break;
            }
            if (a.purpose() == Purpose.PUBLISH && !staging.isEmpty()
                    && accounting.shortBy(staging.peekFirst().slots(), Purpose.STAGING) == 0) {
                take(staging.peekFirst()); // a waiting publication does not hold back a restore that fits now
                continue;
            }
            break;
        }
    }

    private void take(Allocation a) {
        SlotList slots = accounting.allocate(a.slots());
        traces.append(a.key(), origin, a.correlation(), a.purpose() == Purpose.STAGING ? "Allocated {} for staging"
                : "Allocated {}", slots, null);
        take(a, slots);
    }

    private void take(Allocation a, SlotList slots) {
        queue(a.purpose()).pollFirst();
        waitingSlots -= a.slots();
        if (slots != null) {
            a.granted().accept(slots);
        }
    }

    private ArrayDeque<Allocation> queue(Purpose purpose) {
        return purpose == Purpose.PUBLISH ? publications : staging;
    }

    /**
     * The pressure, when it changed since it was last taken (the return to zero included, so that the spill plan
     * never acts on a stale target) or an allocation failed meanwhile; null otherwise.
     */
    Pressure takePressure() {
        int cleanNow = cleanSlots();
        int deficit = Math.max(0, 2 * accounting.intake() - (accounting.free() + cleanNow)) + waitingSlots;
        if (deficit == lastPressureDeficit) {
            return null;
        }
        lastPressureDeficit = deficit;
        return new Pressure(deficit, accounting.free(), cleanNow, accounting.intake());
    }

    /** The most slots a request for {@code purpose} could ever be granted. */
    int maxGrant(Purpose purpose) {
        return SlotAccounting.maxGrant(accounting.total(), accounting.intake(), purpose);
    }

    Stats stats() {
        return new Stats(accounting.total(), accounting.intake(), accounting.free(), cleanSlots(),
                publications.size() + staging.size());
    }

    private int cleanSlots() {
        return (int) clean.getAsLong();
    }

    /** The first broken invariant of the free list and the clean count, or an empty string. */
    String invariantViolation() {
        try {
            accounting.checkInvariants();
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
        int cleanNow = cleanSlots();
        if (cleanNow < 0 || cleanNow > accounting.inUse()) {
            return "the catalog counts " + cleanNow + " clean slots, but only " + accounting.inUse() + " are in use";
        }
        int waiting = 0;
        for (Allocation a : publications) {
            waiting += a.slots();
        }
        for (Allocation a : staging) {
            waiting += a.slots();
        }
        if (waiting != waitingSlots) {
            return "the waiting requests ask for " + waiting + " slots, the ledger counts " + waitingSlots;
        }
        return "";
    }
}
