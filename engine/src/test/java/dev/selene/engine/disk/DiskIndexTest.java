package dev.selene.engine.disk;

import dev.selene.engine.disk.DiskIndex.Entry;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The disk tier's index of committed records: sizes, recency, and removal with descendants. */
class DiskIndexTest {

    private static RecordKey key(long n) {
        return new RecordKey("ns", n);
    }

    private static RecordSpec root(long n) {
        return new RecordSpec(key(n), null, true);
    }

    private static RecordSpec child(long n, RecordSpec parent) {
        return new RecordSpec(key(n), parent.key(), true);
    }

    private static List<RecordKey> keys(List<Entry> entries) {
        return entries.stream().map(Entry::key).toList();
    }

    // ---- put, peek, contains, bytes ----------------------------------------------------------------------

    @Test
    void anyInSubtree_holdsForTheResidentRecordAndItsAncestorsOnly_andRemembersEachAnswer() {
        DiskIndex index = new DiskIndex();
        RecordSpec r = root(1);
        index.put(r, 10, 0);
        RecordSpec up = r;
        for (long n = 2; n <= 2_000; n++) { // a chain two thousand records deep: no recursion may follow it
            RecordSpec c = child(n, up);
            index.put(c, 10, n);
            up = c;
        }
        RecordSpec branch = child(5_000, r);
        index.put(branch, 10, 0);
        Set<RecordKey> resident = Set.of(key(1_500));
        Map<RecordKey, Boolean> memo = new HashMap<>();
        for (long n : new long[] {2_000, 1_500, 1_499, 2, 1, 5_000, 1_501}) {
            boolean aboveOrAtTheResidentOne = n <= 1_500; // the chain's records from the root down to 1,500
            assertEquals(aboveOrAtTheResidentOne, index.anyInSubtree(key(n), resident::contains, memo), "record " + n);
        }
        assertTrue(memo.get(key(1_000)), "the answer of a record walked on the way is remembered");
        assertFalse(index.anyInSubtree(key(9_999), resident::contains, memo), "a record not on disk holds nothing");
    }

    @Test
    void newIndex_isEmpty() {
        DiskIndex index = new DiskIndex();

        assertEquals(0, index.size());
        assertEquals(0, index.bytes());
        assertNull(index.coldest());
        assertEquals(List.of(), index.entries());
        assertNull(index.peek(key(1)));
        assertFalse(index.contains(key(1)));
    }

    @Test
    void put_makesTheRecordVisibleWithItsSpecSizeAndLastUse() {
        DiskIndex index = new DiskIndex();
        RecordSpec r = root(1);

        index.put(r, 4096, 1_000);

        assertTrue(index.contains(key(1)));
        Entry e = index.peek(key(1));
        assertEquals(new Entry(r, 4096, 1_000), e);
        assertEquals(key(1), e.key());
        assertEquals(1, index.size());
        assertEquals(4096, index.bytes());
    }

    @Test
    void bytes_isTheSumOfEveryFile() {
        DiskIndex index = new DiskIndex();
        RecordSpec r = root(1);

        index.put(r, 100, 0);
        index.put(child(2, r), 250, 0);
        index.put(root(3), 7, 0);

        assertEquals(357, index.bytes());
        assertEquals(3, index.size());
    }

    @Test
    void peekAndContains_ofAnAbsentKey_findNothing() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 10, 0);

        assertNull(index.peek(key(2)));
        assertFalse(index.contains(key(2)));
        assertFalse(index.contains(new RecordKey("other", 1)), "the namespace is part of the key");
    }

    @Test
    void put_replacingAnEntry_countsOnlyTheNewFileSize() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 100, 0);
        index.put(root(2), 50, 0);

        index.put(root(1), 30, 5);

        assertEquals(80, index.bytes());
        assertEquals(2, index.size());
        assertEquals(new Entry(root(1), 30, 5), index.peek(key(1)));
    }

    @Test
    void put_replacingAChild_keepsItRemovableWithItsParentOnce() {
        DiskIndex index = new DiskIndex();
        RecordSpec r = root(1);
        RecordSpec c = child(2, r);
        index.put(r, 10, 0);
        index.put(c, 20, 0);
        index.put(c, 25, 1);

        List<Entry> removed = index.removeWithDescendants(key(1));

        assertEquals(List.of(key(1), key(2)), keys(removed), "the child is listed once, not once per put");
        assertEquals(0, index.bytes());
        assertEquals(0, index.size());
    }

    // ---- removeWithDescendants ---------------------------------------------------------------------------

    @Test
    void removeWithDescendants_removesTheWholeSubtreeAndOnlyIt() {
        DiskIndex index = new DiskIndex();
        RecordSpec r = root(1);
        RecordSpec a = child(2, r);
        RecordSpec b = child(3, r);
        RecordSpec a1 = child(4, a);
        RecordSpec a2 = child(5, a);
        RecordSpec a1x = child(6, a1);
        RecordSpec otherRoot = root(7);
        RecordSpec otherChild = child(8, otherRoot);
        index.put(r, 1, 0);
        index.put(a, 10, 0);
        index.put(b, 100, 0);
        index.put(a1, 1_000, 0);
        index.put(a2, 10_000, 0);
        index.put(a1x, 100_000, 0);
        index.put(otherRoot, 1_000_000, 0);
        index.put(otherChild, 10_000_000, 0);

        List<Entry> removed = index.removeWithDescendants(a.key());

        assertEquals(a.key(), removed.getFirst().key(), "the record itself comes first");
        assertEquals(Set.of(key(2), key(4), key(5), key(6)), new HashSet<>(keys(removed)));
        assertEquals(4, removed.size(), "each entry once");
        for (RecordKey k : List.of(key(2), key(4), key(5), key(6))) {
            assertFalse(index.contains(k), k + " removed");
        }
        for (RecordKey k : List.of(key(1), key(3), key(7), key(8))) {
            assertTrue(index.contains(k), k + " kept");
        }
        assertEquals(4, index.size());
        assertEquals(1 + 100 + 1_000_000 + 10_000_000, index.bytes());
    }

    @Test
    void removeWithDescendants_returnsTheRemovedEntriesWithTheirSizes() {
        DiskIndex index = new DiskIndex();
        RecordSpec r = root(1);
        RecordSpec c = child(2, r);
        index.put(r, 11, 100);
        index.put(c, 22, 200);

        List<Entry> removed = index.removeWithDescendants(key(1));

        assertEquals(List.of(new Entry(r, 11, 100), new Entry(c, 22, 200)), removed);
    }

    @Test
    void removeWithDescendants_ofADeepChain_removesEveryLevel() {
        DiskIndex index = new DiskIndex();
        RecordSpec prev = root(0);
        index.put(prev, 1, 0);
        for (int i = 1; i < 500; i++) {
            RecordSpec next = child(i, prev);
            index.put(next, 1, 0);
            prev = next;
        }

        List<Entry> removed = index.removeWithDescendants(key(0));

        assertEquals(500, removed.size());
        assertEquals(key(0), removed.getFirst().key());
        assertEquals(0, index.size());
        assertEquals(0, index.bytes());
    }

    @Test
    void removeWithDescendants_ofALeaf_removesOnlyTheLeafAndKeepsItsParentAndSiblings() {
        DiskIndex index = new DiskIndex();
        RecordSpec r = root(1);
        index.put(r, 1, 0);
        index.put(child(2, r), 2, 0);
        index.put(child(3, r), 4, 0);

        List<Entry> removed = index.removeWithDescendants(key(2));

        assertEquals(List.of(key(2)), keys(removed));
        assertEquals(5, index.bytes());
        // The sibling is still linked under the parent.
        assertEquals(List.of(key(1), key(3)), keys(index.removeWithDescendants(key(1))));
        assertEquals(0, index.size());
    }

    @Test
    void removeWithDescendants_ofAnAbsentKey_removesNothing() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 5, 0);

        assertEquals(List.of(), index.removeWithDescendants(key(9)));
        assertEquals(1, index.size());
        assertEquals(5, index.bytes());
    }

    @Test
    void removeWithDescendants_twice_removesNothingTheSecondTime() {
        DiskIndex index = new DiskIndex();
        RecordSpec r = root(1);
        index.put(r, 5, 0);
        index.put(child(2, r), 5, 0);
        index.removeWithDescendants(key(1));

        assertEquals(List.of(), index.removeWithDescendants(key(1)));
        assertEquals(List.of(), index.removeWithDescendants(key(2)));
        assertEquals(0, index.bytes());
    }

    @Test
    void removedParent_putAgain_doesNotBringBackItsOldChildren() {
        DiskIndex index = new DiskIndex();
        RecordSpec r = root(1);
        RecordSpec c = child(2, r);
        index.put(r, 1, 0);
        index.put(c, 2, 0);
        index.removeWithDescendants(key(1));

        index.put(r, 1, 0);
        index.put(child(3, r), 4, 0);

        assertEquals(List.of(key(1), key(3)), keys(index.removeWithDescendants(key(1))),
                "only the child put after the parent returned");
        assertEquals(0, index.size());
    }

    @Test
    void aChildWhoseParentWasNeverPut_isStillRemovable() {
        DiskIndex index = new DiskIndex();
        RecordSpec missingParent = root(1);
        RecordSpec orphan = child(2, missingParent);
        RecordSpec grandChild = child(3, orphan);
        index.put(orphan, 10, 0);
        index.put(grandChild, 20, 0);

        List<Entry> removed = index.removeWithDescendants(key(2));

        assertEquals(List.of(key(2), key(3)), keys(removed));
        assertEquals(0, index.size());
        assertEquals(0, index.bytes());
        assertFalse(index.contains(key(1)));
    }

    @Test
    void aChildWhoseParentWasNeverPut_doesNotComeBackWhenTheParentIsLaterPutAndRemoved() {
        DiskIndex index = new DiskIndex();
        RecordSpec parent = root(1);
        RecordSpec orphan = child(2, parent);
        index.put(orphan, 10, 0);
        index.removeWithDescendants(key(2));

        index.put(parent, 5, 0);

        assertEquals(List.of(key(1)), keys(index.removeWithDescendants(key(1))));
        assertEquals(0, index.bytes());
    }

    @Test
    void aChildPutBeforeItsParent_isRemovedWithTheParent() {
        DiskIndex index = new DiskIndex();
        RecordSpec parent = root(1);
        RecordSpec c = child(2, parent);
        index.put(c, 10, 0);
        index.put(parent, 5, 0);

        assertEquals(List.of(key(1), key(2)), keys(index.removeWithDescendants(key(1))));
        assertEquals(0, index.size());
    }

    // ---- recency: coldest, touch --------------------------------------------------------------------------

    @Test
    void coldest_isTheFirstPutWhenNothingWasUsed() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 1, 0);
        index.put(root(2), 1, 0);
        index.put(root(3), 1, 0);

        assertEquals(key(1), index.coldest().key());
        assertEquals(List.of(key(1), key(2), key(3)), keys(index.entries()));
    }

    @Test
    void touch_makesTheRecordTheMostRecentAndStoresTheTime() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 1, 0);
        index.put(root(2), 1, 0);
        index.put(root(3), 1, 0);

        index.touch(key(1), 42);

        assertEquals(key(2), index.coldest().key());
        assertEquals(List.of(key(2), key(3), key(1)), keys(index.entries()));
        assertEquals(42, index.peek(key(1)).lastUseNanos());
        assertEquals(1, index.peek(key(1)).fileBytes(), "a use keeps the size");
        assertEquals(3, index.bytes());
    }

    @Test
    void coldest_followsLeastRecentUseAcrossManyTouches() {
        DiskIndex index = new DiskIndex();
        for (int i = 1; i <= 4; i++) {
            index.put(root(i), 1, 0);
        }

        index.touch(key(3), 1);
        index.touch(key(1), 2);
        index.touch(key(4), 3);
        index.touch(key(3), 4);

        assertEquals(List.of(key(2), key(1), key(4), key(3)), keys(index.entries()));
        assertEquals(key(2), index.coldest().key());
        index.removeWithDescendants(key(2));
        assertEquals(key(1), index.coldest().key());
        index.removeWithDescendants(key(1));
        assertEquals(key(4), index.coldest().key());
    }

    @Test
    void touch_ofAnAbsentKey_changesNothing() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 1, 0);
        index.put(root(2), 1, 0);

        index.touch(key(9), 5);

        assertFalse(index.contains(key(9)));
        assertEquals(2, index.size());
        assertEquals(List.of(key(1), key(2)), keys(index.entries()));
    }

    @Test
    void put_replacingAnEntry_makesItTheMostRecent() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 1, 0);
        index.put(root(2), 1, 0);

        index.put(root(1), 1, 9);

        assertEquals(key(2), index.coldest().key());
    }

    @Test
    void peek_doesNotCountAUse() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 1, 0);
        index.put(root(2), 1, 0);
        index.put(root(3), 1, 0);

        Entry e = index.peek(key(1));

        assertEquals(0, e.lastUseNanos());
        assertEquals(key(1), index.coldest().key(), "peek leaves the coldest record coldest");
        assertEquals(List.of(key(1), key(2), key(3)), keys(index.entries()));
    }

    @Test
    void contains_doesNotCountAUse() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 1, 0);
        index.put(root(2), 1, 0);

        assertTrue(index.contains(key(1)));

        assertEquals(key(1), index.coldest().key());
    }

    @Test
    void coldest_doesNotCountAUse() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 1, 0);
        index.put(root(2), 1, 0);

        Entry first = index.coldest();

        assertSame(first, index.coldest());
        assertEquals(key(1), index.coldest().key());
    }

    @Test
    void entries_isACopyThatDoesNotChangeTheIndex() {
        DiskIndex index = new DiskIndex();
        index.put(root(1), 1, 0);
        index.put(root(2), 1, 0);

        List<Entry> copy = index.entries();
        copy.clear();

        assertEquals(2, index.size());
        assertEquals(2, index.entries().size());
    }
}
