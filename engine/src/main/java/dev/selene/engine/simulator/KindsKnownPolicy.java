package dev.selene.engine.simulator;

import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.LruPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.trace.TraceRequest;

import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

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
    /** Two least-recently-used segments: the one-off records, all dropped before any of the others. */
    private final LruPolicy oneOff = new LruPolicy();
    private final LruPolicy others = new LruPolicy();

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

    private LruPolicy segment(RecordIndex.Entry e) {
        return oneOffOnly.contains(e.key()) ? oneOff : others;
    }

    @Override
    public void onUse(RecordIndex.Entry e, Use use) {
        segment(e).onUse(e, use);
    }

    @Override
    public void enlist(RecordIndex.Entry e) {
        segment(e).enlist(e);
    }

    @Override
    public void delist(RecordIndex.Entry e) {
        segment(e).delist(e);
    }

    @Override
    public RecordIndex.Entry victim() {
        RecordIndex.Entry v = oneOff.victim();
        return v != null ? v : others.victim();
    }

    @Override
    public int size() {
        return oneOff.size() + others.size();
    }
}
