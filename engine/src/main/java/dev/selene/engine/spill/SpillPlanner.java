package dev.selene.engine.spill;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Picks which parked records to write to disk, and when (B4, B11, B12): coldest first, never more than the
 * pressure asks for, a record only after its parent's file has committed, at most {@code inFlightCap} writes at
 * once.
 *
 * <p>Confined to the one actor that owns it (the {@code SpillScheduler}); no locks inside.
 *
 * <h2>Design</h2>
 * <pre>
 * Spilling a record whose ancestors are uncommitted starts the root-most uncommitted ancestor instead, and the
 * record waits for it (it is planned again once that ancestor commits). Ancestors started this way count toward
 * the pressure target and the in-flight cap like any other write, so ten cold children of hot uncommitted
 * parents start exactly the cap's worth of parent writes and no child write.
 *
 * A write that fails is retried once unless the disk is full (retrying a full disk at once cannot help). A
 * record that fails twice, or whose failure is not retried, is given up: the caller drops it and its parked
 * descendants, which could never be written under it.
 * </pre>
 */
public final class SpillPlanner {

    /**
     * A spill candidate and the chain of parked records above it, as the memory tier sees them.
     *
     * @param anchorInMemory whether the first ancestor above the parked chain (if any) is resident (clean) or
     *                       still being published in memory; false means it is in no memory state at all
     */
    public record Candidate(RecordSpec spec, int slots, List<Ancestor> parkedAncestors, boolean anchorInMemory) {
        /** A candidate whose anchor is assumed present (it can only be waited for, never found missing). */
        public Candidate(RecordSpec spec, int slots, List<Ancestor> parkedAncestors) {
            this(spec, slots, parkedAncestors, true);
        }

        /** The key of the candidate. */
        public RecordKey key() {
            return spec.key();
        }

        /** The first ancestor above the parked chain: what must be durable before the chain can be written. */
        public RecordKey anchor() {
            return parkedAncestors.isEmpty() ? spec.parent() : parkedAncestors.getLast().spec().parent();
        }
    }

    /** A parked (memory-only) ancestor of a candidate, nearest first. */
    public record Ancestor(RecordSpec spec, int slots) {
    }

    /** What to do after a write failed. */
    public enum FailureAction {
        /** Start the same write again. */
        RETRY,
        /** Give the record up: drop it and its parked descendants. */
        GIVE_UP
    }

    private final int inFlightCap;
    private final Map<RecordKey, Integer> writing = new HashMap<>();
    private final Set<RecordKey> committed = new HashSet<>();
    private final Map<RecordKey, Integer> failures = new HashMap<>();
    private final Map<RecordKey, Long> orphanSince = new HashMap<>();
    private long slotsInFlight;
    private int maxInFlight;

    /** A planner that keeps at most {@code inFlightCap} writes in flight. */
    public SpillPlanner(int inFlightCap) {
        if (inFlightCap < 1) {
            throw new IllegalArgumentException("spill in-flight cap must be at least 1, was " + inFlightCap);
        }
        this.inFlightCap = inFlightCap;
    }

    /**
     * The writes to start now for a pressure of {@code targetSlots}, given candidates coldest first. Writes
     * already in flight count toward the target. Each returned spec is now in flight.
     */
    public List<RecordSpec> plan(List<Candidate> candidates, long targetSlots) {
        List<RecordSpec> start = new ArrayList<>();
        for (Candidate c : candidates) {
            if (writing.size() >= inFlightCap || slotsInFlight >= targetSlots) {
                break;
            }
            if (writing.containsKey(c.key()) || committed.contains(c.key())) {
                continue;
            }
            RecordSpec next = c.spec();
            int nextSlots = c.slots();
            boolean blocked = false;
            RecordKey parent = next.parent();
            int i = 0;
            while (parent != null && !committed.contains(parent)) {
                if (writing.containsKey(parent)) {
                    blocked = true; // an ancestor is being written: wait for it to commit
                    break;
                }
                if (i >= c.parkedAncestors().size() || !c.parkedAncestors().get(i).spec().key().equals(parent)) {
                    blocked = true; // the parent is nowhere durable and not parked: it may still be publishing
                    break;
                }
                Ancestor a = c.parkedAncestors().get(i++);
                next = a.spec();
                nextSlots = a.slots();
                parent = next.parent();
            }
            if (blocked || writing.containsKey(next.key())) {
                continue;
            }
            writing.put(next.key(), nextSlots);
            slotsInFlight += nextSlots;
            maxInFlight = Math.max(maxInFlight, writing.size());
            start.add(next);
        }
        return start;
    }

    /**
     * Candidates that can never be written: the ancestor their parked chain hangs from has been, for at least
     * {@code graceNanos}, not committed, not being written, and in no memory state (abandoned, dropped, expired).
     * They are unreachable for a match too; the caller drops them. The grace covers a parent that is between two
     * attempts of its publication (told {@code Retry}, about to publish again).
     */
    public List<RecordKey> orphans(List<Candidate> candidates, long nowNanos, long graceNanos) {
        List<RecordKey> out = new ArrayList<>();
        for (Candidate c : candidates) {
            RecordKey anchor = c.anchor();
            boolean orphaned = anchor != null && !c.anchorInMemory() && !committed.contains(anchor)
                    && !writing.containsKey(anchor) && !writing.containsKey(c.key());
            if (!orphaned) {
                orphanSince.remove(c.key());
                continue;
            }
            long since = orphanSince.computeIfAbsent(c.key(), k -> nowNanos);
            if (nowNanos - since >= graceNanos) {
                orphanSince.remove(c.key());
                out.add(c.key());
            }
        }
        java.util.Set<RecordKey> seen = new java.util.HashSet<>();
        candidates.forEach(c -> seen.add(c.key()));
        orphanSince.keySet().retainAll(seen);
        return out;
    }

    /**
     * Candidates already committed on disk though parked in memory (published again after their clean copy was
     * dropped): the caller marks them clean instead of writing them again.
     */
    public List<RecordKey> alreadyCommitted(List<Candidate> candidates) {
        List<RecordKey> out = new ArrayList<>();
        for (Candidate c : candidates) {
            if (committed.contains(c.key()) && !writing.containsKey(c.key())) {
                out.add(c.key());
            }
        }
        return out;
    }

    /** Starts a write regardless of pressure (drain at shutdown); false when its parent has not committed. */
    public boolean startUnconditionally(RecordSpec spec, int slots) {
        if (writing.containsKey(spec.key()) || committed.contains(spec.key())) {
            return false;
        }
        if (spec.parent() != null && !committed.contains(spec.parent())) {
            return false;
        }
        writing.put(spec.key(), slots);
        slotsInFlight += slots;
        maxInFlight = Math.max(maxInFlight, writing.size());
        return true;
    }

    /** The write of {@code key} committed. */
    public void committed(RecordKey key) {
        Integer slots = writing.remove(key);
        if (slots != null) {
            slotsInFlight -= slots;
        }
        failures.remove(key);
        committed.add(key);
    }

    /** The planned write of {@code key} will not happen (the record left memory before it could start). */
    public void cancel(RecordKey key) {
        Integer slots = writing.remove(key);
        if (slots != null) {
            slotsInFlight -= slots;
        }
        failures.remove(key);
    }

    /** {@code key} is committed on disk without a write of ours (recovered at start). */
    public void knownCommitted(RecordKey key) {
        committed.add(key);
    }

    /** {@code key} is no longer on disk (evicted, expired or deleted). */
    public void forget(RecordKey key) {
        committed.remove(key);
    }

    /** The write of {@code key} failed; {@code diskFull} when the disk had no room. */
    public FailureAction failed(RecordKey key, boolean diskFull) {
        Integer slots = writing.remove(key);
        if (slots != null) {
            slotsInFlight -= slots;
        }
        if (slots == null) {
            return FailureAction.GIVE_UP; // not in flight (cancelled): nothing to retry
        }
        int n = failures.merge(key, 1, Integer::sum);
        if (!diskFull && n == 1) {
            writing.put(key, slots);
            slotsInFlight += slots;
            return FailureAction.RETRY;
        }
        failures.remove(key);
        return FailureAction.GIVE_UP;
    }

    /** Whether {@code key}'s file has committed. */
    public boolean isCommitted(RecordKey key) {
        return committed.contains(key);
    }

    public boolean isWriting(RecordKey key) {
        return writing.containsKey(key);
    }

    /** Writes in flight now. */
    public int inFlight() {
        return writing.size();
    }

    /** The most writes ever in flight at once. */
    public int maxInFlight() {
        return maxInFlight;
    }

    /** Slots of the records being written. */
    public long slotsInFlight() {
        return slotsInFlight;
    }

    public int inFlightCap() {
        return inFlightCap;
    }
}
