package dev.selene.actors.trace;

import dev.selene.engine.key.RecordKey;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The bounded per-record traces that actors append to and the admin API serves ("actor trace inspection").
 *
 * <p>Thread-safe: every actor that touches a record appends from its own thread. Bounded twice: each trace
 * keeps its last {@link #EVENTS_PER_RECORD} events, and the book keeps the traces of at most
 * {@code maxRecords} records, forgetting the least recently started first, so host memory stays flat.
 */
public final class TraceBook {

    /** Events kept per record; older ones are dropped. */
    public static final int EVENTS_PER_RECORD = 32;

    private final int maxRecords;
    private final ConcurrentHashMap<RecordKey, ArrayDeque<TraceEvent>> traces = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<RecordKey> order = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();

    /** A book that keeps the traces of up to {@code maxRecords} records. */
    public TraceBook(int maxRecords) {
        if (maxRecords < 1) {
            throw new IllegalArgumentException("trace capacity must be at least 1 record, was " + maxRecords);
        }
        this.maxRecords = maxRecords;
    }

    /** Appends one step to {@code key}'s trace. */
    public void append(RecordKey key, String actor, String message) {
        TraceEvent event = new TraceEvent(System.currentTimeMillis(), actor, message);
        ArrayDeque<TraceEvent> trace = traces.computeIfAbsent(key, k -> {
            order.add(k);
            size.incrementAndGet();
            return new ArrayDeque<>();
        });
        synchronized (trace) {
            if (trace.size() == EVENTS_PER_RECORD) {
                trace.pollFirst();
            }
            trace.addLast(event);
        }
        while (size.get() > maxRecords) {
            RecordKey oldest = order.poll();
            if (oldest == null) {
                break;
            }
            if (traces.remove(oldest) != null) {
                size.decrementAndGet();
            }
        }
    }

    /** A copy of {@code key}'s trace, oldest first; empty when the book has none. */
    public Optional<List<TraceEvent>> trace(RecordKey key) {
        ArrayDeque<TraceEvent> trace = traces.get(key);
        if (trace == null) {
            return Optional.empty();
        }
        synchronized (trace) {
            return Optional.of(new ArrayList<>(trace));
        }
    }

    /** Number of records with a trace. */
    public int records() {
        return size.get();
    }
}
