package dev.selene.engine.key;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class ChainHashTest {

    @Test
    void chain_isTheRunningNextFromTheRoot() {
        long[] blocks = {11, 22, 33};

        long[] keys = ChainHash.chain(blocks);

        long k0 = ChainHash.next(ChainHash.ROOT, 11);
        long k1 = ChainHash.next(k0, 22);
        assertArrayEquals(new long[] {k0, k1, ChainHash.next(k1, 33)}, keys);
    }

    @Test
    void equalPrefixes_haveEqualKeys_andADifferentEarlierBlockChangesEveryLaterKey() {
        long[] a = ChainHash.chain(new long[] {1, 2, 3, 4});
        long[] b = ChainHash.chain(new long[] {1, 2, 3, 5});
        long[] c = ChainHash.chain(new long[] {9, 2, 3, 4});

        assertEquals(a[2], b[2]);
        assertNotEquals(a[3], b[3]);
        for (int i = 0; i < a.length; i++) {
            assertNotEquals(a[i], c[i], "position " + i);
        }
    }

    @Test
    void next_dependsOnTheOrderOfBlocks() {
        long ab = ChainHash.next(ChainHash.next(ChainHash.ROOT, 1), 2);
        long ba = ChainHash.next(ChainHash.next(ChainHash.ROOT, 2), 1);

        assertNotEquals(ab, ba);
    }

    @Test
    void chain_ofManyConsecutiveBlocks_hasNoCollisions() {
        long[] blocks = new long[100_000];
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = i % 7; // few distinct blocks: keys must still differ by position
        }
        Set<Long> seen = new HashSet<>();
        for (long k : ChainHash.chain(blocks)) {
            seen.add(k);
        }

        assertEquals(blocks.length, seen.size());
    }

    @Test
    void chain_ofNoBlocks_isEmpty() {
        assertEquals(0, ChainHash.chain(new long[0]).length);
    }
}
