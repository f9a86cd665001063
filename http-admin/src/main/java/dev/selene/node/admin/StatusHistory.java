package dev.selene.node.admin;

import dev.selene.actors.value.CacheStatus;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The status page's memory: a ring of samples (slot occupancy, records per tier and the rates of the main
 * counters, one sample per sample interval, the last few minutes) and the abandons, expiries, evictions (to make
 * room, and by an operator) and record failures within that window, found as growth of their counters between samples. Bounded twice, so
 * it stays flat however long the node runs. Thread-safe.
 */
public final class StatusHistory {

    /** Most recent events {@link #events()} lists. */
    public static final int MAX_EVENTS = 200;

    /** Counter prefixes whose growth is shown as events. */
    static final List<String> EVENT_PREFIXES = List.of("abandoned.", "expired.", "evicted.", "admin.evicted",
            "record.failures");

    /** The rates each sample carries, per second: a name and the counters summed into it. */
    static final Map<String, Predicate<String>> RATES = rates();

    private static Map<String, Predicate<String>> rates() {
        Map<String, Predicate<String>> m = new LinkedHashMap<>();
        m.put("publications", c -> c.startsWith("publish.") && !c.equals("publish.bytes"));
        m.put("lookups", "lookup.total"::equals);
        m.put("restoredRecords", c -> c.startsWith("restore.records."));
        m.put("evictions", c -> c.startsWith("evicted.") || c.equals("admin.evicted"));
        m.put("abandonsAndExpiries", c -> c.startsWith("abandoned.") || c.startsWith("expired."));
        return m;
    }

    /**
     * One sample of the node.
     *
     * @param diskRecords records on the disk tier, or null without one
     * @param rates       per second since the previous sample, by the names of {@link #RATES}; empty in the first
     */
    public record Sample(long epochMillis, int totalSlots, int usedSlots, int intakeSlots, int freeSlots,
                         int cleanSlots, int residentRecords, Integer diskRecords, int inFlight,
                         Map<String, Double> rates) {
    }

    /** Something an operator wants to see: {@code count} more of {@code counter} since the previous sample. */
    public record Event(long epochMillis, String counter, long count) {
    }

    /**
     * The events of one counter within the window, summed.
     *
     * @param kind    {@code abandoned}, {@code expired}, {@code evicted} (to make room, or by an operator) or
     *                {@code failed}
     * @param reason  the abandon reason, the tier that expired or evicted, {@code operator} or {@code record_actor}
     * @param samples samples in which the counter grew
     */
    public record EventGroup(String counter, String kind, String reason, long count, int samples,
                             long firstEpochMillis, long lastEpochMillis) {
    }

    private final int capacity;
    private final ArrayDeque<Sample> samples;
    private final ArrayDeque<Event> events = new ArrayDeque<>();
    private final Map<String, Long> lastCounters = new HashMap<>();
    private boolean primed;
    private long lastEpochMillis;
    private volatile CacheStatus latest;
    private volatile long latestEpochMillis;

    /** A history of at most {@code capacity} samples. */
    public StatusHistory(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("history capacity must be at least 1, was " + capacity);
        }
        this.capacity = capacity;
        this.samples = new ArrayDeque<>(Math.min(capacity, 4096));
    }

    /** Adds a sample of {@code status} taken at {@code epochMillis}. */
    public synchronized void add(CacheStatus status, long epochMillis) {
        latest = status;
        latestEpochMillis = epochMillis;
        Map<String, Double> rates = new LinkedHashMap<>();
        if (primed && epochMillis <= lastEpochMillis) {
            // Two samples in the same millisecond (the scheduler catching up): the rates of the one before.
            rates.putAll(samples.getLast().rates());
        } else if (primed) {
            double seconds = (epochMillis - lastEpochMillis) / 1000.0;
            RATES.forEach((name, counters) -> {
                long growth = 0;
                for (Map.Entry<String, Long> e : status.counters().entrySet()) {
                    if (counters.test(e.getKey())) {
                        growth += Math.max(0, e.getValue() - lastCounters.getOrDefault(e.getKey(), 0L));
                    }
                }
                rates.put(name, growth / seconds);
            });
        }
        for (Map.Entry<String, Long> e : status.counters().entrySet()) {
            long last = lastCounters.getOrDefault(e.getKey(), 0L);
            if (primed && e.getValue() > last && EVENT_PREFIXES.stream().anyMatch(e.getKey()::startsWith)) {
                events.addLast(new Event(epochMillis, e.getKey(), e.getValue() - last));
            }
            lastCounters.put(e.getKey(), e.getValue());
        }
        if (samples.size() == capacity) {
            samples.pollFirst();
        }
        samples.addLast(new Sample(epochMillis, status.totalSlots(), Math.max(0, status.usedSlots()),
                status.intakeSlots(), status.freeSlots(), status.cleanSlots(), status.residentRecords(),
                status.disk() == null ? null : status.disk().records(), status.inFlight(), rates));
        // Events leave with the sample they were found in: at most one per event counter per sample is kept.
        long windowStart = samples.getFirst().epochMillis();
        while (!events.isEmpty() && events.getFirst().epochMillis() < windowStart) {
            events.pollFirst();
        }
        primed = true;
        lastEpochMillis = epochMillis;
    }

    /** The last status sampled, or null before the first sample. */
    public CacheStatus latest() {
        return latest;
    }

    /** When {@link #latest()} was sampled. */
    public long latestEpochMillis() {
        return latestEpochMillis;
    }

    public synchronized List<Sample> samples() {
        return new ArrayList<>(samples);
    }

    /** The events within the window, newest first, at most {@link #MAX_EVENTS}. */
    public synchronized List<Event> events() {
        List<Event> out = new ArrayList<>(Math.min(events.size(), MAX_EVENTS));
        var it = events.descendingIterator();
        while (it.hasNext() && out.size() < MAX_EVENTS) {
            out.add(it.next());
        }
        return out;
    }

    /** The events within the window, one group per counter, the largest count first. */
    public synchronized List<EventGroup> eventGroups() {
        Map<String, EventGroup> groups = new LinkedHashMap<>();
        for (Event e : events) {
            groups.merge(e.counter(), group(e), (a, b) -> new EventGroup(a.counter(), a.kind(), a.reason(),
                    a.count() + b.count(), a.samples() + b.samples(), Math.min(a.firstEpochMillis(),
                    b.firstEpochMillis()), Math.max(a.lastEpochMillis(), b.lastEpochMillis())));
        }
        return groups.values().stream().sorted(Comparator.comparingLong(EventGroup::count).reversed()
                .thenComparing(EventGroup::counter)).toList();
    }

    private static EventGroup group(Event e) {
        String c = e.counter();
        String kind;
        String reason;
        if (c.equals("admin.evicted")) {
            kind = "evicted";
            reason = "operator";
        } else if (c.equals("record.failures")) {
            kind = "failed";
            reason = "record_actor";
        } else {
            int dot = c.indexOf('.');
            kind = c.substring(0, dot);
            reason = c.substring(dot + 1);
        }
        return new EventGroup(c, kind, reason, e.count(), 1, e.epochMillis(), e.epochMillis());
    }

    public int capacity() {
        return capacity;
    }
}
