package dev.selene.engine.simulator;

import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.LruPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceRequest;
import dev.selene.engine.trace.TraceShapes;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The kinds-known reference: the one-off requests' own records go first, then the least recently used. */
class KindsKnownPolicyTest {

    private int nextSlot;

    private static RecordKey key(long hash) {
        return new RecordKey(ReplaySimulator.NAMESPACE, hash);
    }

    /** Inserts a chain root-first: pages for every id but the last, which has a row. */
    private void chain(RecordIndex index, long... ids) {
        for (int i = 0; i < ids.length; i++) {
            boolean row = i == ids.length - 1;
            int[] s = new int[row ? 3 : 1];
            for (int j = 0; j < s.length; j++) {
                s[j] = nextSlot++;
            }
            index.insert(new RecordSpec(key(ids[i]), i == 0 ? null : key(ids[i - 1]), row), SlotList.of(s), false, 0);
            index.checkInvariants();
        }
    }

    @Test
    void theOneOffRequestsRecords_goFirst_thenTheLeastRecentlyUsedChain() {
        assertEquals(List.of(22L, 21L, 12L, 11L, 3L, 2L, 1L), dropOrder(new LruPolicy()), "LRU: oldest first");
        assertEquals(List.of(12L, 11L, 22L, 21L, 3L, 2L, 1L),
                dropOrder(new KindsKnownPolicy(Set.of(key(11), key(12)))),
                "the one-off chain first though newer than another; then the chain used longest ago");
    }

    /** Three chains, the first used again after the others arrived, dropped one by one under {@code policy}. */
    private List<Long> dropOrder(EvictionPolicy policy) {
        RecordIndex index = new RecordIndex(true, policy);
        chain(index, 1, 2, 3);
        chain(index, 21, 22);
        chain(index, 11, 12);
        index.touch(key(3), 1, EvictionPolicy.Use.RESUMED);
        List<Long> order = new ArrayList<>();
        for (RecordIndex.Entry e = index.dropColdest(); e != null; e = index.dropColdest()) {
            order.add(e.key().hash());
            index.checkInvariants();
        }
        return order;
    }

    @Test
    void theOneOffKeys_areThoseNoOtherRequestContains() {
        List<TraceRequest> trace = List.of(new TraceRequest(0, 3 * 512, 1, new long[] {1, 2, 3}),
                new TraceRequest(1, 3 * 512, 1, new long[] {1, 2, 5}),
                new TraceRequest(2, 512, 1, new long[] {7}));
        BitSet oneOff = new BitSet();
        oneOff.set(0);
        long[] first = ChainHash.chain(trace.getFirst().hashIds());
        assertEquals(Set.of(key(first[2])), KindsKnownPolicy.oneOffOnly(trace, oneOff),
                "the shared prefix of the one-off request is not its own");
    }

    @Test
    void onLongChat_knowingTheOneOffRequests_servesMoreThanLru() {
        TraceShapes.Labelled t = TraceShapes.generateLabelled(PolicyComparison.LONG_CHAT, 1, 1500);
        ReplaySimulator sim = new ReplaySimulator(CacheConfig.memoryOnly(Layout.qwenTp1(), 1L << 30)
                .withConcurrency(8), RowRule.LAST_FULL);
        double lru = sim.run(t.requests(), "lru").hitRatio();
        double kinds = sim.runKindsKnown(t.requests(), t.oneOff()).hitRatio();
        assertTrue(kinds > lru + 0.02, "kinds known " + kinds + " against lru " + lru);
        assertEquals(lru, sim.runKindsKnown(t.requests(), new BitSet()).hitRatio(), 0.005,
                "knowing no request one-off, it ranks as LRU does");
    }
}
