package dev.selene.engine.simulator;

import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.trace.TraceRequest;

import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A reference for the policies, not a policy a node can run: least recently used, except that it drops first the
 * records that no request of the trace but the one-off ones contains (judged over the whole trace; a one-off request
 * is one of a conversation its generator drew as one request when the conversation started: a question about a
 * document nobody asks about again). Beyond that label it knows nothing of the future: not whether a conversation
 * will go on after a turn, nor when. It answers how much of the oracle an online policy can reach by telling the
 * one-off requests from the rest, whichever way it tells them.
 */
final class KindsKnownPolicy implements EvictionPolicy {

    /** The name reports use. */
    static final String NAME = "kinds-known";

    private final Set<RecordKey> oneOffOnly;
    private final Map<RecordIndex.Entry, Rank> rank = new HashMap<>();
    private final TreeSet<RecordIndex.Entry> order = new TreeSet<>(Comparator.comparing(rank::get));
    private long enlisted;

    /** One-off records first; then the least recently used; among equals, the one enlisted first. */
    private record Rank(boolean oneOff, long useTick, long seq) implements Comparable<Rank> {
        @Override
        public int compareTo(Rank o) {
            if (oneOff != o.oneOff) {
                return oneOff ? -1 : 1;
            }
            return useTick != o.useTick ? Long.compare(useTick, o.useTick) : Long.compare(seq, o.seq);
        }
    }

    /** A reference that drops the records of {@code oneOffOnly} first. */
    KindsKnownPolicy(Set<RecordKey> oneOffOnly) {
        this.oneOffOnly = oneOffOnly;
    }

    /**
     * The keys of {@code trace} that only the requests {@code oneOff} names contain: a one-off question's own blocks,
     * not the shared prompt it starts with when other requests share it.
     */
    static Set<RecordKey> oneOffOnly(List<TraceRequest> trace, BitSet oneOff) {
        Set<RecordKey> one = new HashSet<>();
        Set<RecordKey> other = new HashSet<>();
        for (int i = 0; i < trace.size(); i++) {
            Set<RecordKey> into = oneOff.get(i) ? one : other;
            for (long hash : ChainHash.chain(trace.get(i).hashIds())) {
                into.add(new RecordKey(ReplaySimulator.NAMESPACE, hash));
            }
        }
        one.removeAll(other);
        return one;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void onUse(RecordIndex.Entry e, Use use) {
        Rank r = rank.get(e);
        if (r != null) {
            order.remove(e);
            rank.put(e, new Rank(r.oneOff(), e.useTick(), ++enlisted));
            order.add(e);
        }
    }

    @Override
    public void enlist(RecordIndex.Entry e) {
        rank.put(e, new Rank(oneOffOnly.contains(e.key()), e.useTick(), ++enlisted));
        order.add(e);
    }

    @Override
    public void delist(RecordIndex.Entry e) {
        order.remove(e);
        rank.remove(e);
    }

    @Override
    public RecordIndex.Entry victim() {
        return order.isEmpty() ? null : order.first();
    }

    @Override
    public int size() {
        return order.size();
    }
}
