package dev.selene.engine.simulator;

import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;

import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * A reference for the policies, not a policy a node can run: it drops the droppable record whose next reference
 * in the trace is farthest away (Belady's rule), which only a replay that knows the future can do.
 *
 * <p>It is a reference, not a proven optimum: records differ in size (a row is four times its pages), a record
 * referenced soon may still never end a match, and only droppable records (memory-only leaves) compete, so a
 * policy can beat it on some trace.
 */
final class OraclePolicy implements EvictionPolicy {

    /** The name reports use. */
    static final String NAME = "oracle";

    /** The next reference of a key after the request being replayed. */
    interface NextUse {
        long after(RecordKey key);
    }

    private final NextUse future;
    private final Map<RecordIndex.Entry, Rank> rank = new HashMap<>();
    private final TreeSet<RecordIndex.Entry> byNextUse = new TreeSet<>(Comparator
            .comparing((RecordIndex.Entry e) -> rank.get(e)));
    private final Map<RecordKey, RecordIndex.Entry> byKey = new HashMap<>();
    private long enlisted;

    /** Farthest next use first; among equals (never used again), the one enlisted first. */
    private record Rank(long nextUse, long seq) implements Comparable<Rank> {
        @Override
        public int compareTo(Rank o) {
            return nextUse != o.nextUse ? Long.compare(o.nextUse, nextUse) : Long.compare(seq, o.seq);
        }
    }

    OraclePolicy(NextUse future) {
        this.future = future;
    }

    @Override
    public String name() {
        return NAME;
    }

    /** The request being replayed references {@code key}: its next use moves on. */
    void referenced(RecordKey key) {
        RecordIndex.Entry e = byKey.get(key);
        Rank r = e == null ? null : rank.get(e);
        if (r != null) {
            byNextUse.remove(e);
            rank.put(e, new Rank(future.after(e.key()), r.seq()));
            byNextUse.add(e);
        }
    }

    @Override
    public void enlist(RecordIndex.Entry e) {
        rank.put(e, new Rank(future.after(e.key()), ++enlisted));
        byNextUse.add(e);
        byKey.put(e.key(), e);
    }

    @Override
    public void delist(RecordIndex.Entry e) {
        byNextUse.remove(e);
        rank.remove(e);
        byKey.remove(e.key());
    }

    @Override
    public RecordIndex.Entry victim() {
        return byNextUse.isEmpty() ? null : byNextUse.first();
    }

    @Override
    public int size() {
        return byNextUse.size();
    }
}
