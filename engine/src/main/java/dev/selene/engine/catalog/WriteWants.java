package dev.selene.engine.catalog;

import dev.selene.engine.key.RecordKey;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The records that want a write, in the order they first asked. A record whose write must wait for one in flight
 * above it (parents are written before children) is set aside under that write and comes back in its place when the
 * write ends, so a spill plan looks only at the records that could start now, not at every waiting descendant of
 * every chain being written, on every event.
 */
final class WriteWants {

    /** Every record that wants a write, active or set aside, with its place in the order. */
    private final Map<RecordKey, Long> place = new HashMap<>();
    /** The records a plan looks at, by place. */
    private final TreeMap<Long, RecordKey> active = new TreeMap<>();
    /** The records set aside, by the write in flight they wait for. */
    private final Map<RecordKey, Set<RecordKey>> waitingOn = new HashMap<>();
    /** The write each set-aside record waits for. */
    private final Map<RecordKey, RecordKey> waitingFor = new HashMap<>();
    private long next;

    /** Whether {@code key} wants a write, set aside or not. */
    boolean contains(RecordKey key) {
        return place.containsKey(key);
    }

    /** {@code key} wants a write; one that already did keeps its place (and stays set aside if it is). */
    void add(RecordKey key) {
        if (!place.containsKey(key)) {
            place.put(key, next);
            active.put(next++, key);
        }
    }

    /** {@code key} no longer wants a write: its write starts, or it left memory. */
    void remove(RecordKey key) {
        Long at = place.remove(key);
        if (at == null) {
            return;
        }
        active.remove(at);
        RecordKey write = waitingFor.remove(key);
        if (write != null) {
            Set<RecordKey> waiters = waitingOn.get(write);
            waiters.remove(key);
            if (waiters.isEmpty()) {
                waitingOn.remove(write);
            }
        }
    }

    /** {@code key} wants a write that must wait until the write of {@code write}, in flight, ends. */
    void await(RecordKey key, RecordKey write) {
        add(key);
        RecordKey before = waitingFor.putIfAbsent(key, write);
        if (before == null) {
            active.remove(place.get(key));
            waitingOn.computeIfAbsent(write, k -> new LinkedHashSet<>()).add(key);
        } else if (!before.equals(write)) {
            throw new IllegalStateException(key + " already waits for the write of " + before + ", not " + write);
        }
    }

    /** The write of {@code write} ended (committed or not): the records waiting for it are looked at again. */
    void writeEnded(RecordKey write) {
        Set<RecordKey> waiters = waitingOn.remove(write);
        if (waiters != null) {
            for (RecordKey k : waiters) {
                waitingFor.remove(k);
                active.put(place.get(k), k);
            }
        }
    }

    /** Each set-aside record with the write it waits for. */
    Map<RecordKey, RecordKey> waiting() {
        return Map.copyOf(waitingFor);
    }

    /** The records a plan looks at first, in the order they asked. */
    List<RecordKey> active() {
        return new ArrayList<>(active.values());
    }

    /** Checks that every set-aside record waits for a write {@code inFlight} says is in flight, and is listed once. */
    void checkInvariants(Predicate<RecordKey> inFlight) {
        for (Map.Entry<RecordKey, Set<RecordKey>> w : waitingOn.entrySet()) {
            if (!inFlight.test(w.getKey())) {
                throw new IllegalStateException(w.getValue().size() + " records wait for a write of " + w.getKey()
                        + " that is not in flight");
            }
            for (RecordKey k : w.getValue()) {
                boolean listed = w.getKey().equals(waitingFor.get(k)) && place.containsKey(k);
                if (!listed || active.containsKey(place.get(k))) {
                    throw new IllegalStateException(k + " waits for " + w.getKey() + " but is listed otherwise");
                }
            }
        }
        for (Map.Entry<RecordKey, RecordKey> w : waitingFor.entrySet()) {
            Set<RecordKey> waiters = waitingOn.get(w.getValue());
            if (waiters == null || !waiters.contains(w.getKey())) {
                throw new IllegalStateException(w.getKey() + " waits for " + w.getValue()
                        + " but is not listed under that write: it would never be looked at again");
            }
        }
        if (active.size() + waitingFor.size() != place.size()) {
            throw new IllegalStateException("records that want a write: " + place.size() + ", of which "
                    + active.size() + " active and " + waitingFor.size() + " waiting");
        }
    }
}
