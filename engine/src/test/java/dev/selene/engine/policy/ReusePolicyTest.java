package dev.selene.engine.policy;

import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotList;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reuse policy's order over a memory-only index: what it drops first and what it keeps. */
class ReusePolicyTest {

    private int nextSlot;

    private static RecordKey key(long hash) {
        return new RecordKey("ns", hash);
    }

    private RecordIndex.Entry insert(RecordIndex index, long hash, Long parent, boolean row) {
        int slots = row ? 3 : 1;
        int[] s = new int[slots];
        for (int i = 0; i < slots; i++) {
            s[i] = nextSlot++;
        }
        RecordIndex.Entry e = index.insert(new RecordSpec(key(hash), parent == null ? null : key(parent), row),
                SlotList.of(s), false, 0);
        index.checkInvariants();
        return e;
    }

    /** Inserts a chain root-first: pages for every id but the last, which has a row. */
    private void chain(RecordIndex index, long... ids) {
        for (int i = 0; i < ids.length; i++) {
            insert(index, ids[i], i == 0 ? null : ids[i - 1], i == ids.length - 1);
        }
    }

    private static List<Long> drain(RecordIndex index) {
        List<Long> order = new ArrayList<>();
        for (RecordIndex.Entry e = index.dropColdest(); e != null; e = index.dropColdest()) {
            order.add(e.key().hash());
            index.checkInvariants();
        }
        return order;
    }

    @Test
    void aChainsTail_goesWhole_beforeTheNextChain() {
        RecordIndex index = new RecordIndex(true, new ReusePolicy());
        chain(index, 1, 2, 3);
        chain(index, 11, 12, 13);
        List<Long> order = drain(index);
        assertTrue(order.equals(List.of(3L, 2L, 1L, 13L, 12L, 11L)) || order.equals(List.of(13L, 12L, 11L, 3L, 2L, 1L)),
                "one chain from its tail up, then the other: " + order);
    }

    @Test
    void aRowOfTheClassThatGetsResumed_outlivesAnOlderRowOfAClassThatDoesNot() {
        ReusePolicy policy = new ReusePolicy();
        RecordIndex index = new RecordIndex(true, policy);
        // Teach it: rows that start a chain get resumed, rows that extend a used chain do not.
        for (long c = 0; c < 6; c++) {
            long root = 100 * (c + 1);
            chain(index, root, root + 1);
            index.touch(key(root + 1), 1, EvictionPolicy.Use.RESUMED);
            insert(index, root + 2, root + 1, false);
            insert(index, root + 3, root + 2, true);
        }
        assertTrue(policy.share(1) > policy.share(0), "novel rows resumed more often than extensions");
        // An extension row, older, and a novel row, newer: the extension goes first.
        chain(index, 900, 901);
        index.touch(key(901), 2, EvictionPolicy.Use.REPUBLISHED);
        insert(index, 902, 901L, true);
        chain(index, 950, 951);
        List<Long> order = drain(index);
        assertTrue(order.indexOf(902L) < order.indexOf(951L), "the extension row first: " + order);
    }

    @Test
    void aPublicationsRecords_arrivingInAnyOrder_rankAsIfTheyArrivedRootFirst() {
        List<List<Long>> orders = new ArrayList<>();
        for (boolean childFirst : new boolean[] {false, true}) {
            ReusePolicy policy = new ReusePolicy();
            RecordIndex index = new RecordIndex(true, policy);
            chain(index, 1, 2);
            index.touch(key(2), 1, EvictionPolicy.Use.RESUMED);
            // An extension of the used chain (3, 4) and a new chain (10, 11), each published in one go.
            if (childFirst) {
                insert(index, 4, 3L, true);
                insert(index, 3, 2L, false);
                insert(index, 11, 10L, true);
                insert(index, 10, null, false);
            } else {
                insert(index, 3, 2L, false);
                insert(index, 4, 3L, true);
                insert(index, 10, null, false);
                insert(index, 11, 10L, true);
            }
            assertEquals(0.5, policy.share(1), 1e-12, "two novel rows, one resumed");
            assertEquals(1 / 3.0, policy.share(0), 1e-12, "one extension row");
            orders.add(drain(index));
        }
        assertEquals(orders.get(0), orders.get(1));
    }

    @Test
    void aRecordUsedAgain_movesBehindTheOthers() {
        RecordIndex index = new RecordIndex(true, new ReusePolicy());
        chain(index, 1);
        chain(index, 2);
        index.touch(key(1), 1, EvictionPolicy.Use.REPUBLISHED);
        assertEquals(List.of(2L, 1L), drain(index));
        assertNull(index.dropColdest());
    }
}
