package dev.selene.node.admin;

import dev.selene.actors.api.CacheStatus;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The status page's memory: a ring of slot-occupancy samples (one per sample interval, the last few minutes)
 * and the recent abandons, expiries and operator evictions, found as growth of their counters between samples.
 * Bounded twice, so it stays flat however long the node runs. Thread-safe.
 */
public final class StatusHistory {

    /** Most recent events kept. */
    public static final int MAX_EVENTS = 200;

    /** Counter prefixes whose growth is shown as events. */
    static final List<String> EVENT_PREFIXES = List.of("abandoned.", "expired.", "admin.evicted", "record.failures");

    /** One sample of the node. */
    public record Sample(long epochMillis, int totalSlots, int usedSlots, int intakeSlots, int freeSlots,
                         int cleanSlots, int residentRecords, int inFlight) {
    }

    /** Something an operator wants to see: {@code count} more of {@code counter} since the previous sample. */
    public record Event(long epochMillis, String counter, long count) {
    }

    private final int capacity;
    private final ArrayDeque<Sample> samples;
    private final ArrayDeque<Event> events = new ArrayDeque<>();
    private final Map<String, Long> lastCounters = new HashMap<>();
    private boolean primed;
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
        if (samples.size() == capacity) {
            samples.pollFirst();
        }
        samples.addLast(new Sample(epochMillis, status.totalSlots(), Math.max(0, status.usedSlots()),
                status.intakeSlots(), status.freeSlots(), status.cleanSlots(), status.residentRecords(),
                status.inFlight()));
        for (Map.Entry<String, Long> e : status.counters().entrySet()) {
            if (EVENT_PREFIXES.stream().noneMatch(e.getKey()::startsWith)) {
                continue;
            }
            long last = lastCounters.getOrDefault(e.getKey(), 0L);
            if (e.getValue() > last && primed) {
                if (events.size() == MAX_EVENTS) {
                    events.pollFirst();
                }
                events.addLast(new Event(epochMillis, e.getKey(), e.getValue() - last));
            }
            lastCounters.put(e.getKey(), e.getValue());
        }
        primed = true;
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

    /** Recent events, newest first. */
    public synchronized List<Event> events() {
        List<Event> out = new ArrayList<>(events);
        return out.reversed();
    }

    public int capacity() {
        return capacity;
    }
}
