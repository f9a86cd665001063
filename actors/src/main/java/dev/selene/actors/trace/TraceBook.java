package dev.selene.actors.trace;

import dev.selene.engine.key.RecordKey;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;

/**
 * The bounded per-record traces that actors append to and the admin API serves ("actor trace inspection").
 *
 * <p>Thread-safe: every actor that touches a record appends from its own thread. Bounded twice: each trace
 * keeps its last {@link #EVENTS_PER_RECORD} events, and the book keeps the traces of at most
 * {@code maxRecords} records, forgetting the least recently started first, so host memory stays flat.
 *
 * <p>An event costs one allocation (the step kept), one clock read and the trace's lock: times come from a monotonic
 * nanosecond clock anchored to the wall clock once, so an event's time and its distance from the record's previous
 * event are exact to the microsecond and never go backwards. A message with arguments is kept as its template and
 * arguments ({@code {}} marks where each goes) and put together only when the trace is read, which few are: the
 * number formatting and string building of every step would otherwise be paid on every publication. A record's first event also costs
 * a map insert and one slot of a ring of the records in the order their traces started, whose previous holder (the
 * oldest trace) is forgotten then: no queue node, no counter.
 */
public final class TraceBook {

    /** Events kept per record; older ones are dropped. */
    public static final int EVENTS_PER_RECORD = 32;

    private final int maxRecords;
    private final LongSupplier nanoClock;
    private final long anchorNanos;
    private final long anchorEpochMicros;
    private final ConcurrentHashMap<RecordKey, Trace> traces = new ConcurrentHashMap<>();
    /**
     * The records with a trace in the order their traces started, as a ring: the trace that starts next takes the
     * slot of the oldest, which is forgotten. Trace {@code n} (counting from 0) takes slot {@code n % maxRecords}.
     */
    private final AtomicReferenceArray<RecordKey> started;
    private final AtomicLong traceCount = new AtomicLong();
    private final AtomicLong correlations = new AtomicLong();

    /** A book that keeps the traces of up to {@code maxRecords} records, on the system clock. */
    public TraceBook(int maxRecords) {
        this(maxRecords, System::nanoTime);
    }

    /** A book whose event times advance with {@code nanoClock}, starting from the wall clock's time now. */
    public TraceBook(int maxRecords, LongSupplier nanoClock) {
        if (maxRecords < 1) {
            throw new IllegalArgumentException("trace capacity must be at least 1 record, was " + maxRecords);
        }
        this.maxRecords = maxRecords;
        this.started = new AtomicReferenceArray<>(maxRecords);
        this.nanoClock = nanoClock;
        this.anchorNanos = nanoClock.getAsLong();
        this.anchorEpochMicros = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
    }

    /** A new correlation id, for one publication or restore and the actors working for it; never 0. */
    public long newCorrelation() {
        return correlations.incrementAndGet();
    }

    /** Appends one step to {@code key}'s trace, under the correlation of the record's latest step. */
    public void append(RecordKey key, TraceSource source, String message) {
        append(key, source, 0, message, null);
    }

    /**
     * Appends one step to {@code key}'s trace. A {@code correlation} of 0 keeps the one of the record's latest step
     * (the publication or restore a shared actor such as the disk store works for); {@code outcome} may be null.
     */
    public void append(RecordKey key, TraceSource source, long correlation, String message, String outcome) {
        append(key, source, correlation, message, 0, 0, 0, null, outcome);
    }

    /**
     * Appends one step whose message is {@code template} with its one {@code {}} replaced by {@code value}; put
     * together when the trace is read.
     */
    public void append(RecordKey key, TraceSource source, long correlation, String template, long value,
                       String outcome) {
        append(key, source, correlation, template, 1, value, 0, null, outcome);
    }

    /** As {@link #append(RecordKey, TraceSource, long, String, long, String)} with two values, in order. */
    public void append(RecordKey key, TraceSource source, long correlation, String template, long first, long second,
                       String outcome) {
        append(key, source, correlation, template, 2, first, second, null, outcome);
    }

    /**
     * As {@link #append(RecordKey, TraceSource, long, String, long, String)} with an immutable object, written with
     * its {@code toString()} when the trace is read.
     */
    public void append(RecordKey key, TraceSource source, long correlation, String template, Object value,
                       String outcome) {
        append(key, source, correlation, template, -1, 0, 0, value, outcome);
    }

    private void append(RecordKey key, TraceSource source, long correlation, String text, int arguments, long first,
                        long second, Object object, String outcome) {
        Trace trace = traces.get(key);
        if (trace == null) {
            Trace fresh = new Trace();
            trace = traces.putIfAbsent(key, fresh);
            if (trace == null) {
                trace = fresh;
                RecordKey oldest = started.getAndSet((int) (traceCount.getAndIncrement() % maxRecords), key);
                if (oldest != null) {
                    traces.remove(oldest);
                }
            }
        }
        long now = nanoClock.getAsLong();
        synchronized (trace) {
            long since = trace.lastNanos == Long.MIN_VALUE ? -1 : Math.max(0, (now - trace.lastNanos) / 1_000);
            trace.lastNanos = now;
            if (correlation != 0) {
                trace.correlation = correlation;
            }
            if (trace.events.size() == EVENTS_PER_RECORD) {
                trace.events.pollFirst();
            }
            trace.events.addLast(new Step(epochMicros(now), since, source, text, arguments, first, second, object,
                    outcome, trace.correlation));
        }
    }

    /** A copy of {@code key}'s trace, oldest first; empty when the book has none. */
    public Optional<List<TraceEvent>> trace(RecordKey key) {
        Trace trace = traces.get(key);
        return trace == null ? Optional.empty() : Optional.of(trace.copy());
    }

    /**
     * The traces of up to {@code limit} records in {@code namespace} (null: any) whose hash, written as 16 hex
     * digits, starts with {@code hashPrefix} (null or empty: any), most recently active first.
     *
     * @throws IllegalArgumentException when {@code hashPrefix} is not 1..16 hex digits or {@code limit} is below 1
     */
    public List<RecordTrace> search(String namespace, String hashPrefix, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, was " + limit);
        }
        HashPrefix prefix = HashPrefix.parse(hashPrefix);
        List<Match> matches = new ArrayList<>();
        traces.forEach((key, trace) -> {
            if ((namespace == null || namespace.equals(key.namespace())) && prefix.matches(key.hash())) {
                matches.add(new Match(key, trace, trace.lastNanos));
            }
        });
        matches.sort(Comparator.comparingLong(Match::lastNanos).reversed());
        List<RecordTrace> out = new ArrayList<>(Math.min(limit, matches.size()));
        for (Match m : matches.subList(0, Math.min(limit, matches.size()))) {
            out.add(new RecordTrace(m.key(), m.trace().copy()));
        }
        return out;
    }

    /** Number of records with a trace. */
    public int records() {
        return traces.size();
    }

    private long epochMicros(long nanos) {
        return anchorEpochMicros + (nanos - anchorNanos) / 1_000;
    }

    /** One record's trace, oldest event first. */
    public record RecordTrace(RecordKey key, List<TraceEvent> events) {
    }

    private record Match(RecordKey key, Trace trace, long lastNanos) {
    }

    /** The leading hex digits of a record's hash, as the top bits they fix. */
    private record HashPrefix(int bits, long value) {

        static HashPrefix parse(String hex) {
            if (hex == null || hex.isEmpty()) {
                return new HashPrefix(0, 0);
            }
            if (hex.length() > 16 || !hex.chars().allMatch(c -> c < 128 && Character.digit(c, 16) >= 0)) {
                throw new IllegalArgumentException("key prefix '" + hex + "' is invalid; allowed: 1..16 hex digits");
            }
            return new HashPrefix(hex.length() * 4, Long.parseUnsignedLong(hex, 16));
        }

        boolean matches(long hash) {
            return bits == 0 || hash >>> (64 - bits) == value;
        }
    }

    /**
     * One event as kept: its message is {@code text} as it is ({@code arguments} 0), or a template whose {@code {}}
     * take {@code first} (1), then {@code second} (2), or {@code object} (-1).
     */
    private record Step(long epochMicros, long sinceMicros, TraceSource source, String text, int arguments,
                        long first, long second, Object object, String outcome, long correlation) {

        TraceEvent event() {
            return new TraceEvent(epochMicros, sinceMicros, source.kind(), source.path(), message(), outcome,
                    correlation);
        }

        private String message() {
            if (arguments == 0) {
                return text;
            }
            StringBuilder out = new StringBuilder(text.length() + 24);
            int from = 0;
            int filled = 0;
            int at;
            while ((at = text.indexOf("{}", from)) >= 0 && filled < Math.abs(arguments)) {
                out.append(text, from, at);
                if (arguments < 0) {
                    out.append(object);
                } else {
                    out.append(filled == 0 ? first : second);
                }
                filled++;
                from = at + 2;
            }
            return out.append(text, from, text.length()).toString();
        }
    }

    /** A record's events and what the next event needs from the previous one; guarded by its own monitor. */
    private static final class Trace {
        final ArrayDeque<Step> events = new ArrayDeque<>();
        volatile long lastNanos = Long.MIN_VALUE;
        long correlation;

        synchronized List<TraceEvent> copy() {
            List<TraceEvent> out = new ArrayList<>(events.size());
            for (Step s : events) {
                out.add(s.event());
            }
            return out;
        }
    }
}
