package dev.selene.engine.catalog;

import dev.selene.engine.catalog.RecordCatalog.Admission;
import dev.selene.engine.catalog.RecordCatalog.Commit;
import dev.selene.engine.catalog.RecordCatalog.Description;
import dev.selene.engine.catalog.RecordCatalog.EvictResult;
import dev.selene.engine.catalog.RecordCatalog.Eviction;
import dev.selene.engine.catalog.RecordCatalog.Info;
import dev.selene.engine.catalog.RecordCatalog.Located;
import dev.selene.engine.catalog.RecordCatalog.Match;
import dev.selene.engine.catalog.RecordCatalog.Recovered;
import dev.selene.engine.catalog.RecordCatalog.Removal;
import dev.selene.engine.catalog.RecordCatalog.SpillPlan;
import dev.selene.engine.catalog.RecordCatalog.SpillStart;
import dev.selene.engine.catalog.RecordCatalog.State;
import dev.selene.engine.catalog.RecordCatalog.Stats;
import dev.selene.engine.catalog.RecordCatalog.Where;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.expiry.ExpirySweep;
import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.LruPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The record catalog's rules, one behaviour per test, on the {@code small} layout with a manual clock. The
 * catalog's own invariants are checked after every test.
 */
class RecordCatalogTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "ns";
    /** Length of the file of a record with a row; every disk capacity below is a multiple of it. */
    private static final long ROW_FILE = RecordFileFormat.fileLength(LAYOUT, true);
    private static final long PAGE_FILE = RecordFileFormat.fileLength(LAYOUT, false);
    private static final int ROW_SLOTS = LAYOUT.slotsPerRecord(true);
    private static final int PAGE_SLOTS = LAYOUT.slotsPerRecord(false);
    private static final long MAX_AGE_NANOS = 100;

    private final AtomicLong clock = new AtomicLong(1_000);
    private final Map<RecordKey, SlotList> slotsHandedIn = new HashMap<>();
    private RecordCatalog catalog;
    private int nextSlot;

    @AfterEach
    void catalogInvariantsHold() {
        if (catalog != null) {
            catalog.checkInvariants();
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    private RecordCatalog memoryOnly() {
        return catalog = new RecordCatalog(LAYOUT, 0, 1, clock::get);
    }

    /**
     * Memory only, with a policy that orders by recency as LRU does but ranks rows apart from their pages (as the
     * policies that rank by worth do), so that a parent's row can be dropped.
     */
    private RecordCatalog memoryOnlyDroppingRows() {
        LruPolicy lru = new LruPolicy();
        EvictionPolicy rowsApart = new EvictionPolicy() {
            @Override
            public String name() {
                return "lru-rows-apart";
            }

            @Override
            public boolean dropsRowsApart() {
                return true;
            }

            @Override
            public void onUse(RecordIndex.Entry e, Use use) {
                lru.onUse(e, use);
            }

            @Override
            public void enlist(RecordIndex.Entry e) {
                lru.enlist(e);
            }

            @Override
            public void delist(RecordIndex.Entry e) {
                lru.delist(e);
            }

            @Override
            public RecordIndex.Entry victim() {
                return lru.victim();
            }

            @Override
            public int size() {
                return lru.size();
            }
        };
        return catalog = new RecordCatalog(LAYOUT, 0, 1, clock::get, rowsApart);
    }

    private RecordCatalog withDisk(long capacityBytes, int spillCap) {
        return catalog = new RecordCatalog(LAYOUT, capacityBytes, spillCap, clock::get);
    }

    /** A disk that holds {@code files} row records, with up to four writes in flight. */
    private RecordCatalog withDiskOf(int files) {
        return withDisk(files * ROW_FILE, 4);
    }

    private static RecordKey key(long n) {
        return new RecordKey(NS, n);
    }

    private static RecordSpec root(long n) {
        return new RecordSpec(key(n), null, true);
    }

    private static RecordSpec child(long n, RecordSpec parent) {
        return new RecordSpec(key(n), parent.key(), true);
    }

    private static RecordSpec pageOnly(long n, RecordSpec parent) {
        return new RecordSpec(key(n), parent == null ? null : parent.key(), false);
    }

    private SlotList slotsFor(RecordSpec spec) {
        int count = spec.slots(LAYOUT);
        SlotList s = SlotList.of(IntStream.range(nextSlot, nextSlot + count).toArray());
        nextSlot += count;
        return s;
    }

    /** Admits {@code spec} and makes it resident (dirty). */
    private SlotList publish(RecordSpec spec) {
        assertEquals(Admission.ADMITTED, catalog.admit(spec), spec.key() + " admitted");
        SlotList s = slotsFor(spec);
        catalog.resident(spec, s);
        slotsHandedIn.put(spec.key(), s);
        return s;
    }

    private void publishAll(RecordSpec... specs) {
        for (RecordSpec s : specs) {
            publish(s);
        }
    }

    private static long fileOf(RecordSpec spec) {
        return RecordFileFormat.fileLength(LAYOUT, spec.hasRow());
    }

    private static List<RecordKey> startedKeys(SpillPlan plan) {
        return plan.start().stream().map(s -> s.spec().key()).toList();
    }

    /** Plans and commits writes until nothing more starts; the keys committed, in order. */
    private List<RecordKey> spillAll() {
        List<RecordKey> committed = new ArrayList<>();
        for (SpillPlan plan = catalog.planSpills(Long.MAX_VALUE); !plan.start().isEmpty();
             plan = catalog.planSpills(Long.MAX_VALUE)) {
            for (SpillStart s : plan.start()) {
                assertEquals(Commit.COMMITTED, catalog.committed(s.spec().key(), fileOf(s.spec())));
                committed.add(s.spec().key());
            }
        }
        return committed;
    }

    /** A record on disk only: published, written and dropped from memory. */
    private void durableOnly(RecordSpec spec) {
        publish(spec);
        spillAll();
        assertEquals(State.CLEAN, catalog.state(spec.key()));
        while (catalog.state(spec.key()) == State.CLEAN) {
            assertFalse(catalog.evictClean(1).isEmpty(), "clean records left to drop");
        }
        assertEquals(State.DURABLE_ONLY, catalog.state(spec.key()));
    }

    private void advance(long nanos) {
        clock.addAndGet(nanos);
    }

    private static long[] chain(long... hashes) {
        return hashes;
    }

    private static List<RecordKey> keys(RecordSpec... specs) {
        List<RecordKey> out = new ArrayList<>();
        for (RecordSpec s : specs) {
            out.add(s.key());
        }
        return out;
    }

    private static Set<RecordKey> keySet(List<RecordKey> keys) {
        return new HashSet<>(keys);
    }

    // ---- construction --------------------------------------------------------------------------------------

    @Test
    void constructor_whenSpillCapBelowOne_isRejectedNamingTheCap() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RecordCatalog(LAYOUT, ROW_FILE, 0, clock::get));
        assertTrue(e.getMessage().contains("was 0"), e.getMessage());
    }

    @Test
    void newCatalog_isEmpty() {
        withDiskOf(4);
        assertEquals(new Stats(0, 0, 0, 0, 0, 0, 0, 0, 0), catalog.stats());
        assertEquals(List.of(), catalog.list(null, null));
        assertEquals(0, catalog.dirtyRecords());
        assertEquals(0, catalog.writesInFlight());
    }

    // ---- admission -----------------------------------------------------------------------------------------

    @Test
    void admit_whenKeyUnknown_isAdmittedAndInFlight() {
        withDiskOf(4);
        RecordSpec a = root(1);

        assertEquals(Admission.ADMITTED, catalog.admit(a));

        assertEquals(State.IN_FLIGHT, catalog.state(a.key()));
        assertEquals(1, catalog.stats().inFlight());
        assertNull(catalog.slotsOf(a.key()), "nothing resident yet");
    }

    @Test
    void admit_whenPublicationOfKeyInFlight_isInFlight() {
        withDiskOf(4);
        catalog.admit(root(1));

        assertEquals(Admission.IN_FLIGHT, catalog.admit(root(1)));
        assertEquals(1, catalog.stats().inFlight());
    }

    @Test
    void admit_whenKeyResident_isPresent() {
        withDiskOf(4);
        publish(root(1));

        assertEquals(Admission.PRESENT, catalog.admit(root(1)));
        assertEquals(State.DIRTY, catalog.state(key(1)), "a duplicate changes nothing but the last use");
        assertEquals(0, catalog.stats().inFlight());
    }

    @Test
    void admit_whenKeyCommittedOnDiskOnly_isPresent() {
        withDiskOf(4);
        durableOnly(root(1));

        assertEquals(Admission.PRESENT, catalog.admit(root(1)));
        assertEquals(State.DURABLE_ONLY, catalog.state(key(1)));
        assertEquals(0, catalog.stats().inFlight());
    }

    @Test
    void admit_whenDuplicateOfResidentRecord_refreshesLastUseSoLaterExpirySparesIt() {
        memoryOnly();
        publishAll(root(1), root(2));
        advance(80);

        assertEquals(Admission.PRESENT, catalog.admit(root(1)));
        assertEquals(0, catalog.info(key(1)).idleNanos());
        advance(40); // record 2 is 120 old, record 1 only 40

        Removal r = catalog.expire(MAX_AGE_NANOS);

        assertEquals(List.of(key(2)), r.removed());
        assertEquals(State.DIRTY, catalog.state(key(1)));
    }

    @Test
    void admit_whenDuplicateOfDiskOnlyRecord_refreshesLastUseSoLaterExpirySparesIt() {
        withDiskOf(4);
        catalog.recovered(List.of(new Recovered(root(1), ROW_FILE, 80), new Recovered(root(2), ROW_FILE, 80)));

        assertEquals(Admission.PRESENT, catalog.admit(root(1)));
        advance(40);

        Removal r = catalog.expire(MAX_AGE_NANOS);

        assertEquals(List.of(key(2)), r.removed());
        assertEquals(List.of(key(2)), r.files());
        assertEquals(State.DURABLE_ONLY, catalog.state(key(1)));
    }

    @Test
    void admit_afterPublicationEnded_isAdmittedAgain() {
        withDiskOf(4);
        catalog.admit(root(1));
        catalog.publicationEnded(key(1));

        assertNull(catalog.state(key(1)));
        assertEquals(Admission.ADMITTED, catalog.admit(root(1)));
    }

    @Test
    void resident_whenKeyNotInFlight_isRejected() {
        withDiskOf(4);
        assertThrows(IllegalStateException.class, () -> catalog.resident(root(1), slotsFor(root(1))));
        assertNull(catalog.state(key(1)));
    }

    @Test
    void resident_withDisk_makesRecordDirtyAndNotDroppable() {
        withDiskOf(4);
        SlotList s = publish(root(1));

        assertEquals(State.DIRTY, catalog.state(key(1)));
        assertEquals(s, catalog.slotsOf(key(1)));
        assertEquals(0, catalog.cleanSlots());
        assertTrue(catalog.evictClean(ROW_SLOTS).isEmpty(), "a dirty record is never dropped with a disk");
        Stats stats = catalog.stats();
        assertAll(() -> assertEquals(1, stats.residentRecords()),
                () -> assertEquals(ROW_SLOTS, stats.residentSlots()),
                () -> assertEquals(ROW_SLOTS, stats.dirtySlots()),
                () -> assertEquals(0, stats.inFlight()),
                () -> assertEquals(1, catalog.dirtyRecords()));
    }

    // ---- adopt after a restore -----------------------------------------------------------------------------

    @Test
    void adoptRestored_whenFileCommitted_isResidentAndClean() {
        withDiskOf(4);
        durableOnly(root(1));
        SlotList s = slotsFor(root(1));

        assertTrue(catalog.adoptRestored(root(1), s));

        assertEquals(State.CLEAN, catalog.state(key(1)));
        assertEquals(s, catalog.slotsOf(key(1)));
        assertEquals(ROW_SLOTS, catalog.cleanSlots());
    }

    @Test
    void adoptRestored_whenResidentOrInFlight_isRefused() {
        withDiskOf(4);
        SlotList resident = publish(root(1));
        catalog.admit(root(2));

        assertFalse(catalog.adoptRestored(root(1), slotsFor(root(1))));
        assertFalse(catalog.adoptRestored(root(2), slotsFor(root(2))));

        assertEquals(resident, catalog.slotsOf(key(1)), "the resident copy is kept");
        assertEquals(State.IN_FLIGHT, catalog.state(key(2)));
    }

    // ---- match ---------------------------------------------------------------------------------------------

    @Test
    void match_whenRecordInMemoryAndOnDisk_prefersMemory() {
        withDiskOf(4);
        publish(root(1));
        spillAll();
        assertEquals(State.CLEAN, catalog.state(key(1)));

        Match m = catalog.match(NS, chain(1));

        assertEquals(List.of(new Located(root(1), Where.MEMORY)), m.records());
        assertEquals("", m.missReason());
    }

    @Test
    void match_ofAChainWithAKeySkippedOrNotFromTheRoot_endsWhereItStopsBeingAChain_inMemoryAndOnDisk() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        durableOnly(a);
        publishAll(b, c);

        // A caller's off-by-one: each key is cached, but C does not hang from A, and B is no root.
        assertEquals(List.of(new Located(a, Where.DISK)), catalog.match(NS, chain(1, 3)).records(), "[A, C]");
        assertEquals(List.of(), catalog.match(NS, chain(2, 3)).records(), "[B, C]");
        assertEquals(List.of(), catalog.present(NS, chain(3)), "[C]");
        assertEquals(3, catalog.match(NS, chain(1, 2, 3)).depth(), "the chain itself still matches whole");
    }

    @Test
    void match_whenRootOnlyOnDisk_chainsThroughDiskIntoMemory() {
        withDiskOf(4);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        durableOnly(a);
        publish(b);

        Match m = catalog.match(NS, chain(1, 2));

        assertEquals(List.of(new Located(a, Where.DISK), new Located(b, Where.MEMORY)), m.records());
        assertEquals(2, m.depth());
    }

    @Test
    void match_whenDeepestRecordsArePageOnly_endsAtDeepestRecordWithRow() {
        memoryOnly();
        RecordSpec a = pageOnly(1, null);
        RecordSpec b = child(2, a);
        RecordSpec c = pageOnly(3, b);
        RecordSpec d = pageOnly(4, c);
        publishAll(a, b, c, d);

        Match m = catalog.match(NS, chain(1, 2, 3, 4));

        assertEquals(List.of(new Located(a, Where.MEMORY), new Located(b, Where.MEMORY)), m.records(),
                "page-only records supply pages but never end a match");
    }

    @Test
    void match_whenChainIsEmpty_missesSayingSo() {
        memoryOnly();
        publish(root(1));

        Match m = catalog.match(NS, chain());

        assertEquals(0, m.depth());
        assertEquals("the chain is empty", m.missReason());
    }

    @Test
    void match_whenFirstKeyAbsent_missesSayingItIsNotCached() {
        memoryOnly();
        RecordSpec a = root(1);
        publishAll(a, child(2, a));

        Match m = catalog.match(NS, chain(9, 1, 2));

        assertEquals(List.of(), m.records());
        assertEquals("the chain's first record is not cached", m.missReason());
    }

    @Test
    void match_whenOneCachedRecordHasNoRow_missesCountingIt() {
        memoryOnly();
        publish(pageOnly(1, null));

        Match m = catalog.match(NS, chain(1, 2));

        assertEquals(0, m.depth());
        assertEquals("1 record of the chain cached, none carries a row", m.missReason());
    }

    @Test
    void match_whenSeveralCachedRecordsHaveNoRow_missesCountingThem() {
        withDiskOf(4);
        RecordSpec a = pageOnly(1, null);
        RecordSpec b = pageOnly(2, a);
        RecordSpec c = pageOnly(3, b);
        durableOnly(a);
        publishAll(b, c);

        Match m = catalog.match(NS, chain(1, 2, 3));

        assertEquals(0, m.depth());
        assertEquals("3 records of the chain cached, none carries a row", m.missReason());
    }

    @Test
    void match_stopsAtTheFirstRecordMissingFromEveryTier() {
        memoryOnly();
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        publishAll(a, c); // b never published: c hangs from nothing

        Match m = catalog.match(NS, chain(1, 2, 3));

        assertEquals(List.of(new Located(a, Where.MEMORY)), m.records());
    }

    @Test
    void match_whenRecordOnlyInFlight_doesNotMatchIt() {
        memoryOnly();
        RecordSpec a = root(1);
        publish(a);
        catalog.admit(child(2, a));

        Match m = catalog.match(NS, chain(1, 2));

        assertEquals(1, m.depth());
        Match inFlight = catalog.match(NS, chain(2));
        assertEquals("the chain's first record is not cached", inFlight.missReason());
    }

    @Test
    void match_inAnotherNamespace_misses() {
        memoryOnly();
        publish(root(1));

        assertEquals(0, catalog.match("other", chain(1)).depth());
    }

    // ---- memory-only ---------------------------------------------------------------------------------------

    @Test
    void evictClean_memoryOnly_dropsLeavesOnlyColdestFirst() {
        memoryOnly();
        RecordSpec a = pageOnly(1, null);
        RecordSpec c = root(3);
        RecordSpec b = child(2, a);
        publish(a);
        advance(1);
        publish(c);
        advance(1);
        publish(b); // a is the coldest record but has a resident child: c and b are the leaves

        assertEquals(2L * ROW_SLOTS, catalog.cleanSlots(), "dirty leaves are droppable without a disk");

        Removal first = catalog.evictClean(1);
        assertEquals(List.of(c.key()), first.removed(), "the coldest leaf, not the coldest record");
        assertEquals(List.of(slotsHandedIn.get(c.key())), first.slots());
        assertEquals(List.of(), first.files());

        Removal rest = catalog.evictClean(Integer.MAX_VALUE);
        assertEquals(List.of(b.key(), a.key()), rest.removed(), "a parent goes after its last child");
        assertEquals(0, catalog.stats().residentRecords());
    }

    @Test
    void evictClean_stopsOnceEnoughSlotsAreFreed() {
        memoryOnly();
        publishAll(root(1), root(2), root(3));

        Removal r = catalog.evictClean(ROW_SLOTS + 1);

        assertEquals(List.of(key(1), key(2)), r.removed());
        assertEquals(State.DIRTY, catalog.state(key(3)));
    }

    @Test
    void evictClean_memoryOnly_skipsPinnedLeafAndItsAncestors() {
        memoryOnly();
        RecordSpec a = pageOnly(1, null);
        RecordSpec b = child(2, a);
        publishAll(a, b, root(3));
        assertTrue(catalog.pin(b.key()));

        assertEquals(ROW_SLOTS, catalog.cleanSlots(), "only the unpinned leaf is droppable");
        Removal r = catalog.evictClean(Integer.MAX_VALUE);

        assertEquals(List.of(key(3)), r.removed());
        catalog.unpin(b.key());
        assertEquals(List.of(b.key(), a.key()), catalog.evictClean(Integer.MAX_VALUE).removed());
    }

    @Test
    void evictClean_memoryOnly_dropsTheRowOfAParentColdestFirst_andKeepsItsPagesForItsChild() {
        memoryOnlyDroppingRows();
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = root(3);
        SlotList aSlots = publish(a);
        advance(1);
        publish(c);
        advance(1);
        publish(b); // a is the coldest: its row can go, its pages stay under b
        int rowPieces = ROW_SLOTS - PAGE_SLOTS;
        assertEquals(2L * ROW_SLOTS + rowPieces, catalog.cleanSlots(), "two leaves and a parent's row");

        Removal first = catalog.evictClean(1);

        assertEquals(List.of(), first.removed(), "no record left");
        assertEquals(List.of(a.key()), first.rowsDropped());
        assertEquals(List.of(aSlots.slice(PAGE_SLOTS, ROW_SLOTS)), first.slots(), "the row's slots, the last ones");
        assertEquals(aSlots.slice(0, PAGE_SLOTS), catalog.slotsOf(a.key()), "its pages stay where they were");
        assertFalse(catalog.info(a.key()).spec().hasRow());
        assertEquals(0, catalog.match(NS, chain(1)).depth(), "nothing ends at a row that is gone");
        assertEquals(2, catalog.match(NS, chain(1, 2)).depth(), "the child still matches through the pages");
        assertEquals(2L * ROW_SLOTS, catalog.cleanSlots(), "a page-only parent is not droppable");

        assertEquals(List.of(c.key()), catalog.evictClean(1).removed());
        assertEquals(List.of(b.key(), a.key()), catalog.evictClean(Integer.MAX_VALUE).removed(),
                "the pages go after their last child");
        catalog.checkInvariants();
    }

    @Test
    void evictClean_memoryOnly_neverDropsTheRowOfAPinnedParent() {
        memoryOnlyDroppingRows();
        RecordSpec a = root(1);
        publishAll(a, child(2, a));
        assertTrue(catalog.pin(a.key()));

        assertEquals(ROW_SLOTS, catalog.cleanSlots(), "only the child");
        assertEquals(List.of(key(2)), catalog.evictClean(Integer.MAX_VALUE).removed());
        assertTrue(catalog.info(a.key()).spec().hasRow());
    }

    @Test
    void evictClean_withADisk_dropsCleanRecordsWhole() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        publishAll(a, b);
        assertEquals(List.of(a.key(), b.key()), spillAll());

        Removal r = catalog.evictClean(1);

        assertEquals(List.of(), r.rowsDropped(), "a row is dropped apart from its pages only without a disk");
        assertEquals(1, r.removed().size());
    }

    @Test
    void admit_holdsTheParentOfAPublicationInFlight_untilItIsResidentOrEnds() {
        memoryOnly();
        RecordSpec a = root(1);
        publish(a);
        RecordSpec b = child(2, a);
        assertEquals(Admission.ADMITTED, catalog.admit(b));

        assertEquals(0, catalog.cleanSlots(), "the parent of a record being published stays");
        assertTrue(catalog.evictClean(Integer.MAX_VALUE).isEmpty());

        catalog.publicationEnded(b.key());
        assertEquals(ROW_SLOTS, catalog.cleanSlots(), "released when the publication ends without the record");
        assertEquals(Admission.ADMITTED, catalog.admit(b));
        catalog.resident(b, slotsFor(b));
        assertEquals(List.of(key(2), key(1)), catalog.evictClean(Integer.MAX_VALUE).removed(),
                "released when the record is resident: its child keeps it now");
        catalog.checkInvariants();
    }

    @Test
    void admit_memoryOnly_aRowAtARecordHeldWithoutOne_joinsItsPages() {
        memoryOnly();
        RecordSpec a = pageOnly(1, null);
        RecordSpec b = child(2, a);
        SlotList pages = publish(a);
        publish(b);
        assertEquals(0, catalog.match(NS, chain(1)).depth());

        RecordSpec withRow = root(1);
        assertEquals(Admission.ADMITTED, catalog.admit(withRow), "the row is new");
        assertEquals(State.DIRTY, catalog.state(a.key()), "the record stays resident meanwhile");
        assertEquals(Admission.IN_FLIGHT, catalog.admit(withRow));
        SlotList copy = slotsFor(withRow);
        SlotList surplus = catalog.resident(withRow, copy);

        assertEquals(copy.slice(0, PAGE_SLOTS), surplus, "the copy's pages come back to be freed");
        assertEquals(SlotList.concat(pages, copy.slice(PAGE_SLOTS, ROW_SLOTS)), catalog.slotsOf(a.key()),
                "the record keeps its pages and takes the row's slots");
        assertEquals(1, catalog.match(NS, chain(1)).depth(), "a match can end there now");
        assertEquals(2, catalog.match(NS, chain(1, 2)).depth());
        assertEquals(Admission.PRESENT, catalog.admit(withRow), "held with a row now");
        assertEquals(Admission.PRESENT, catalog.admit(a), "a page-only publication adds nothing");
        catalog.checkInvariants();
    }

    @Test
    void evictClean_memoryOnly_underLru_neverDropsARowApartFromItsPages() {
        memoryOnly();
        RecordSpec a = root(1);
        publishAll(a, child(2, a));

        assertEquals(ROW_SLOTS, catalog.cleanSlots(), "only the leaf: recency alone cannot rank a parent's row");
        assertEquals(List.of(key(2), key(1)), catalog.evictClean(Integer.MAX_VALUE).removed());
    }

    @Test
    void admit_withADisk_aRowAtARecordHeldWithoutOne_isPresent() {
        withDiskOf(8);
        RecordSpec a = pageOnly(1, null);
        publish(a);

        assertEquals(Admission.PRESENT, catalog.admit(root(1)), "with a durable tier a record keeps what it first had");
    }

    @Test
    void publicationEnded_ofARowForAHeldRecord_leavesTheRecordAsItWas() {
        memoryOnly();
        RecordSpec a = pageOnly(1, null);
        SlotList pages = publish(a);
        assertEquals(Admission.ADMITTED, catalog.admit(root(1)));

        catalog.publicationEnded(a.key());

        assertEquals(pages, catalog.slotsOf(a.key()));
        assertFalse(catalog.info(a.key()).spec().hasRow());
        assertEquals(State.DIRTY, catalog.state(a.key()));
        catalog.checkInvariants();
    }

    @Test
    void planSpills_memoryOnly_returnsNothing() {
        memoryOnly();
        RecordSpec a = root(1);
        publishAll(a, child(2, a), root(3));

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(), plan.start());
        assertTrue(plan.removal().isEmpty());
        assertTrue(plan.orphans().isEmpty());
        assertEquals(0, catalog.writesInFlight());
    }

    @Test
    void stats_memoryOnly_countsUndroppableParentsAsDirty() {
        memoryOnly();
        RecordSpec a = pageOnly(1, null);
        publishAll(a, child(2, a));

        Stats s = catalog.stats();

        assertEquals(PAGE_SLOTS + ROW_SLOTS, s.residentSlots());
        assertEquals(ROW_SLOTS, s.cleanSlots());
        assertEquals(PAGE_SLOTS, s.dirtySlots());
        assertEquals(0, s.diskRecords());
    }

    // ---- spill choice --------------------------------------------------------------------------------------

    @Test
    void planSpills_whenColdestIsChild_startsRootMostUncommittedAncestorInstead() {
        withDisk(8 * ROW_FILE, 1);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        RecordSpec d = root(4);
        SlotList aSlots = publish(a);
        publishAll(b, c, d);
        catalog.admit(a);
        catalog.admit(b); // dirty, coldest first: c, d, a, b

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(new SpillStart(a, aSlots)), plan.start(), "c's root-most uncommitted ancestor");
        assertTrue(plan.removal().isEmpty());
        assertEquals(State.BEING_WRITTEN, catalog.state(a.key()));
        assertEquals(State.DIRTY, catalog.state(d.key()), "d is colder than a but waits");
    }

    @Test
    void planSpills_aCandidateWithNoRoomOnTheDisk_staysDirty_andTheCandidatesAfterItAreStillPlanned() {
        RecordSpec r1 = root(1);
        RecordSpec r2 = child(2, r1);
        withDisk(2 * ROW_FILE + fileOf(pageOnly(9, null)), 4);
        publishAll(r1, r2);
        spillAll(); // both files stay: their records are in memory, so they are not deleted for room
        RecordSpec big = root(3);
        RecordSpec underBig = pageOnly(4, big);
        RecordSpec small = pageOnly(5, null);
        publishAll(big, underBig, small); // coldest dirty first: big, underBig, small

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(small.key()), startedKeys(plan), "the row record finds no room; the small one fits");
        assertTrue(plan.removal().isEmpty(), "no file of a resident record is deleted for room");
        assertEquals(State.DIRTY, catalog.state(big.key()));
        assertEquals(State.DIRTY, catalog.state(underBig.key()));
    }

    @Test
    void planSpills_whileAncestorIsWritten_startsNoDescendant() {
        withDisk(8 * ROW_FILE, 4);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        publishAll(a, b, c);

        assertEquals(List.of(a.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
        assertEquals(List.of(), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "b and c wait for a's commit");
        assertEquals(State.DIRTY, catalog.state(b.key()));
        assertEquals(State.DIRTY, catalog.state(c.key()));
    }

    @Test
    void planSpills_writesAChainOneGenerationPerCommit() {
        withDisk(8 * ROW_FILE, 4);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        publishAll(a, b, c);

        assertEquals(List.of(a.key(), b.key(), c.key()), spillAll());

        assertEquals(State.CLEAN, catalog.state(c.key()));
        assertEquals(0, catalog.dirtyRecords());
    }

    @Test
    void planSpills_afterParentCommitted_plansTheWaitingChildFirst() {
        withDisk(8 * ROW_FILE, 1);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec d = root(4);
        publishAll(a, b, d);
        catalog.admit(a); // dirty, coldest first: b, d, a
        assertEquals(List.of(a.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "for b");
        catalog.admit(b); // now d is the coldest dirty record

        assertEquals(Commit.COMMITTED, catalog.committed(a.key(), ROW_FILE));
        SpillPlan next = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(b.key()), startedKeys(next), "b waited for a, so it goes before the colder d");
        assertEquals(State.DIRTY, catalog.state(d.key()));
    }

    @Test
    void planSpills_afterRootCommitted_startsTheMiddleRecordForTheWaitingLeaf() {
        withDisk(8 * ROW_FILE, 1);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        RecordSpec d = root(4);
        publishAll(a, b, c, d);
        catalog.admit(a);
        catalog.admit(b); // dirty, coldest first: c, d, a, b
        assertEquals(List.of(a.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
        catalog.admit(c); // coldest first: d, a (being written), b, c

        catalog.committed(a.key(), ROW_FILE);

        assertEquals(List.of(b.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)),
                "c still wants a write: its next uncommitted ancestor goes before the colder d");
    }

    @Test
    void planSpills_aChainFortyDeep_isWrittenRootFirst_oneRecordAPlan() {
        // Every record below the one being written waits for it: each commit lets exactly the next one start.
        withDisk(64 * ROW_FILE, 1);
        RecordSpec[] chain = new RecordSpec[40];
        chain[0] = root(1);
        for (int i = 1; i < chain.length; i++) {
            chain[i] = child(i + 1, chain[i - 1]);
        }
        publishAll(chain);
        for (RecordSpec r : chain) {
            assertEquals(List.of(r.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
            catalog.checkInvariants();
            assertEquals(Commit.COMMITTED, catalog.committed(r.key(), ROW_FILE));
        }
        assertEquals(List.of(), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "all written");
        for (RecordSpec r : chain) {
            assertEquals(State.CLEAN, catalog.state(r.key()));
        }
    }

    @Test
    void planSpills_recordsWaitingForAWriteThatFails_leaveWithIt_andNothingWaitsForIt() {
        withDisk(8 * ROW_FILE, 1);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        publishAll(a, b, c);
        assertEquals(List.of(a.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "b and c wait for a");

        Removal dropped = catalog.writeFailed(a.key());

        assertEquals(Set.of(a.key(), b.key(), c.key()), new HashSet<>(dropped.removed()));
        catalog.checkInvariants();
        assertEquals(List.of(), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
    }

    @Test
    void planSpills_recordsWaitingForAWriteTheDiskCouldNotTake_waitForItsSecondTry() {
        withDisk(8 * ROW_FILE, 1);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        publishAll(a, b);
        assertEquals(List.of(a.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)));

        catalog.diskFull(a.key()); // a is dirty again, the capacity what the disk held; b waits for no write now

        catalog.checkInvariants();
        assertEquals(List.of(), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "no room at all");
        catalog.setDurableCapacity(8 * ROW_FILE);
        assertEquals(List.of(a.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "a again, before b");
        assertEquals(Commit.COMMITTED, catalog.committed(a.key(), ROW_FILE));
        assertEquals(List.of(b.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
    }

    @Test
    void planSpills_respectsTheInFlightCap() {
        withDisk(8 * ROW_FILE, 2);
        publishAll(root(1), root(2), root(3));

        assertEquals(List.of(key(1), key(2)), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "coldest first");
        assertEquals(2, catalog.writesInFlight());
        assertEquals(List.of(), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "the cap is reached");

        catalog.committed(key(1), ROW_FILE);

        assertEquals(List.of(key(3)), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
    }

    @Test
    void planSpills_respectsTheTargetCountingSlotsAlreadyBeingWritten() {
        withDisk(8 * ROW_FILE, 8);
        publishAll(root(1), root(2), root(3));

        assertEquals(List.of(key(1)), startedKeys(catalog.planSpills(ROW_SLOTS)));
        assertEquals(ROW_SLOTS, catalog.writingSlots());
        assertEquals(List.of(), startedKeys(catalog.planSpills(ROW_SLOTS)), "slots being written meet it");
        assertEquals(List.of(key(2)), startedKeys(catalog.planSpills(ROW_SLOTS + 1)));
        assertEquals(2L * ROW_SLOTS, catalog.writingSlots());
        assertEquals(List.of(key(3)), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
    }

    @Test
    void planSpills_countsAnAncestorsSlotsTowardTheTarget() {
        withDisk(8 * ROW_FILE, 8);
        RecordSpec p = pageOnly(1, null);
        RecordSpec b = child(2, p);
        RecordSpec d = root(3);
        publishAll(p, b, d);
        catalog.admit(p); // dirty, coldest first: b, d, p

        assertEquals(List.of(p.key()), startedKeys(catalog.planSpills(PAGE_SLOTS)),
                "p's slots meet the target: d is not started");
        assertEquals(PAGE_SLOTS, catalog.writingSlots(), "the ancestor's slots, not the child's");

        assertEquals(List.of(d.key()), startedKeys(catalog.planSpills(PAGE_SLOTS + 1)),
                "b still waits for p; d fits under the target");
    }

    @Test
    void planSpills_countsAnAncestorsWriteTowardTheInFlightCap() {
        withDisk(8 * ROW_FILE, 1);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        publishAll(a, b, root(3));
        catalog.admit(a); // dirty, coldest first: b, 3, a

        assertEquals(List.of(a.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
        assertEquals(1, catalog.writesInFlight());
        assertEquals(State.DIRTY, catalog.state(key(3)));
    }

    @Test
    void planSpills_pinsTheStartedRecordAndReservesItsFile() {
        withDisk(ROW_FILE, 4);
        SlotList s = publish(root(1));
        publish(root(2));

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(new SpillStart(root(1), s)), plan.start(), "the disk has room for one file only");
        Info info = catalog.info(key(1));
        assertEquals(State.BEING_WRITTEN, info.state());
        assertEquals(1, info.pins());
        assertFalse(info.onDisk());
        Stats stats = catalog.stats();
        assertEquals(1, stats.writing());
        assertEquals(ROW_SLOTS, stats.writingSlots());
        assertEquals(0, stats.diskBytes(), "reserved, not committed");
    }

    @Test
    void committed_makesTheRecordCleanAndDroppable() {
        withDiskOf(4);
        publish(root(1));
        catalog.planSpills(Long.MAX_VALUE);
        assertEquals(0, catalog.cleanSlots());

        assertEquals(Commit.COMMITTED, catalog.committed(key(1), ROW_FILE));

        assertEquals(State.CLEAN, catalog.state(key(1)));
        assertEquals(ROW_SLOTS, catalog.cleanSlots());
        Info info = catalog.info(key(1));
        assertEquals(0, info.pins(), "the write's pin is released");
        assertTrue(info.onDisk());
        Stats stats = catalog.stats();
        assertAll(() -> assertEquals(1, stats.diskRecords()),
                () -> assertEquals(ROW_FILE, stats.diskBytes()),
                () -> assertEquals(0, stats.writing()),
                () -> assertEquals(0, stats.writingSlots()),
                () -> assertEquals(0, stats.dirtySlots()),
                () -> assertEquals(0, catalog.dirtyRecords()));
    }

    @Test
    void committed_whenNotBeingWritten_isRejected() {
        withDiskOf(4);
        publish(root(1));

        assertThrows(IllegalStateException.class, () -> catalog.committed(key(1), ROW_FILE));
        assertEquals(State.DIRTY, catalog.state(key(1)));
    }

    @Test
    void evictClean_withDisk_dropsCleanRecordsToDiskOnly() {
        withDiskOf(4);
        SlotList s = publish(root(1));
        spillAll();
        publish(root(2));

        Removal r = catalog.evictClean(Integer.MAX_VALUE);

        assertEquals(List.of(key(1)), r.removed());
        assertEquals(List.of(s), r.slots());
        assertEquals(List.of(), r.files(), "the file stays");
        assertEquals(State.DURABLE_ONLY, catalog.state(key(1)));
        assertEquals(State.DIRTY, catalog.state(key(2)));
    }

    @Test
    void writeFailed_dropsTheRecordAndItsDirtyDescendants() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        publishAll(a, b, c, root(4));
        assertEquals(List.of(a.key(), key(4)), startedKeys(catalog.planSpills(Long.MAX_VALUE)));

        Removal r = catalog.writeFailed(a.key());

        assertEquals(List.of(c.key(), b.key(), a.key()), r.removed(), "deepest first");
        assertEquals(Set.of(slotsHandedIn.get(a.key()), slotsHandedIn.get(b.key()), slotsHandedIn.get(c.key())),
                new HashSet<>(r.slots()));
        assertEquals(List.of(), r.files());
        assertNull(catalog.state(a.key()));
        assertNull(catalog.state(b.key()));
        assertNull(catalog.state(c.key()));
        assertEquals(State.BEING_WRITTEN, catalog.state(key(4)));
        assertEquals(1, catalog.writesInFlight());
    }

    @Test
    void diskFull_lowersTheCapacityToWhatTheDiskHeld_evictsTheColdestForRoom_andKeepsTheRecordDirty() {
        withDiskOf(8);
        RecordSpec cold = root(1);
        RecordSpec warm = root(2);
        durableOnly(cold);
        advance(10);
        durableOnly(warm);
        RecordSpec c = root(3);
        publish(c);
        assertEquals(List.of(c.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)));

        Removal r = catalog.diskFull(c.key());

        assertEquals(List.of(cold.key()), r.files(), "the coldest file made room for one more");
        assertEquals(2 * ROW_FILE, catalog.diskCapacityBytes(), "what the disk held when it was full");
        assertEquals(State.DIRTY, catalog.state(c.key()), "dirty again, not dropped");
        assertEquals(List.of(c.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "planned anew");
        assertEquals(Commit.COMMITTED, catalog.committed(c.key(), ROW_FILE));
        assertEquals(State.DURABLE_ONLY, catalog.state(warm.key()));
    }

    @Test
    void limitDiskCapacity_removesTheColdestFilesUntilTheRestFit_andNeverRaisesIt() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = root(2);
        RecordSpec c = root(3);
        durableOnly(a);
        advance(10);
        durableOnly(b);
        advance(10);
        durableOnly(c);

        Removal r = catalog.limitDiskCapacity(2 * ROW_FILE);

        assertEquals(List.of(a.key()), r.files());
        assertEquals(2 * ROW_FILE, catalog.diskCapacityBytes());
        assertTrue(catalog.limitDiskCapacity(100 * ROW_FILE).isEmpty());
        assertEquals(2 * ROW_FILE, catalog.diskCapacityBytes(), "never raised");
    }

    @Test
    void limitDiskCapacity_afterARestoreAdoptedTheColdestFile_removesTheNextColdestInstead() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = root(2);
        RecordSpec c = root(3);
        durableOnly(a);
        advance(10);
        durableOnly(b);
        advance(10);
        durableOnly(c);
        advance(10);
        assertTrue(catalog.adoptRestored(a, slotsFor(a)), "a read back by a restore whose use is not reported yet");

        Removal r = catalog.limitDiskCapacity(2 * ROW_FILE);

        assertEquals(List.of(b.key()), r.files(), "the file just read is the most recently used");
        assertEquals(State.CLEAN, catalog.state(a.key()));
    }

    @Test
    void writeFailed_keepsAPinnedDescendantThatTheNextPlanDropsOnceUnpinned() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        publishAll(a, b);
        catalog.planSpills(Long.MAX_VALUE);
        assertTrue(catalog.pin(b.key()));

        Removal r = catalog.writeFailed(a.key());

        assertEquals(List.of(a.key()), r.removed());
        assertEquals(State.DIRTY, catalog.state(b.key()), "a restore is copying out of it");
        catalog.unpin(b.key());
        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);
        assertEquals(List.of(), plan.start());
        assertEquals(List.of(b.key()), plan.orphans().removed(), "its chain can never be written");
        assertEquals(List.of(slotsHandedIn.get(b.key())), plan.orphans().slots());
        assertTrue(plan.removal().isEmpty(), "no file was removed for room");
    }

    @Test
    void planSpills_whenAncestorIsInNoState_dropsTheOrphanChain() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        catalog.admit(a);
        publishAll(b, c);
        catalog.publicationEnded(a.key()); // a never became resident

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(), plan.start());
        assertEquals(List.of(c.key(), b.key()), plan.orphans().removed());
        assertEquals(Set.of(slotsHandedIn.get(b.key()), slotsHandedIn.get(c.key())),
                new HashSet<>(plan.orphans().slots()));
        assertEquals(List.of(), plan.orphans().files());
        assertTrue(plan.removal().isEmpty());
        assertNull(catalog.state(b.key()));
        assertNull(catalog.state(c.key()));
    }

    @Test
    void planSpills_whenParentWasNeverPublished_dropsTheOrphan() {
        withDiskOf(8);
        publish(child(2, root(1)));

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(key(2)), plan.orphans().removed());
    }

    @Test
    void planSpills_whenAncestorInFlight_waitsAndStartsOnceItIsResident() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        catalog.admit(a);
        publish(b);

        SpillPlan waiting = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(), waiting.start());
        assertTrue(waiting.orphans().isEmpty(), "its parent is still coming");
        assertTrue(waiting.removal().isEmpty());
        assertEquals(State.DIRTY, catalog.state(b.key()));

        catalog.resident(a, slotsFor(a));
        assertEquals(List.of(a.key(), b.key()), spillAll());
    }

    // ---- disk room -----------------------------------------------------------------------------------------

    @Test
    void planSpills_whenDiskFull_evictsLeastRecentlyUsedFileWithItsDescendants() {
        withDiskOf(3);
        RecordSpec r1 = root(1);
        RecordSpec r2 = child(2, r1);
        RecordSpec s = root(3);
        catalog.recovered(List.of(new Recovered(r1, ROW_FILE, 300), new Recovered(r2, ROW_FILE, 100),
                new Recovered(s, ROW_FILE, 200)));
        publish(root(4));

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(key(4)), startedKeys(plan));
        assertEquals(List.of(r1.key(), r2.key()), plan.removal().files(), "r1 is the oldest; r2 goes with it");
        assertEquals(List.of(r1.key(), r2.key()), plan.removal().removed());
        assertTrue(plan.orphans().isEmpty(), "r1 and r2 were not resident");
        assertNull(catalog.state(r1.key()));
        assertNull(catalog.state(r2.key()), "never a file without its parent's");
        assertEquals(State.DURABLE_ONLY, catalog.state(s.key()));
    }

    @Test
    void planSpills_neverDeletesAResidentRecordsFileForRoom_butOnceThatRecordHasLeftMemory() {
        withDiskOf(1);
        publish(root(1));
        spillAll();
        assertEquals(ROW_SLOTS, catalog.cleanSlots());
        publish(root(2));

        SpillPlan waiting = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(), startedKeys(waiting), "deleting 1's file would only make 1 dirty again");
        assertTrue(waiting.removal().isEmpty());
        assertEquals(State.CLEAN, catalog.state(key(1)));
        assertEquals(List.of(key(1)), catalog.evictClean(ROW_SLOTS).removed(), "memory needs room first");
        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);
        assertEquals(List.of(key(2)), startedKeys(plan));
        assertEquals(List.of(key(1)), plan.removal().files());
    }

    @Test
    void planSpills_neverDeletesAFileARestoreIsReading_orItsAncestorsFile_untilTheReadIsOver() {
        withDiskOf(2);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        durableOnly(a);
        durableOnly(b);
        advance(10);
        assertTrue(catalog.pinFile(b.key()), "a restore matched b on disk and reads it");
        publish(root(3));
        publish(root(4));

        SpillPlan waiting = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(), startedKeys(waiting), "the only room is a's and b's files, and b is being read");
        assertTrue(waiting.removal().isEmpty());
        assertEquals(State.DURABLE_ONLY, catalog.state(a.key()), "removing a would remove b with it");
        assertEquals(1, catalog.filePins());
        catalog.checkInvariants();

        catalog.unpinFile(b.key());
        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);
        assertEquals(List.of(key(3), key(4)), startedKeys(plan));
        assertEquals(List.of(a.key(), b.key()), plan.removal().files(), "the read is over: the coldest go");
        assertEquals(0, catalog.filePins());
        catalog.checkInvariants();
    }

    @Test
    void planSpills_whenTheFilesThatMayGoWouldNotMakeTheRoom_deletesNone() {
        withDisk(PAGE_FILE + ROW_FILE, 4);
        RecordSpec small = pageOnly(1, null);
        durableOnly(small); // a page-only file of a record no longer in memory: it may go
        publish(root(2));
        spillAll(); // a row file of a record still in memory: it may not
        publish(root(3));

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(), startedKeys(plan), "no room for a row file");
        assertTrue(plan.removal().isEmpty(), "the page-only file alone would not make the room: it stays");
        assertEquals(State.DURABLE_ONLY, catalog.state(small.key()));
        assertEquals(State.DIRTY, catalog.state(key(3)));
        catalog.checkInvariants();
    }

    @Test
    void pinFile_ofARecordWithoutADurableCopy_pinsNothing_andPinsNest_eachUnpinReleasingOne_neverBelowNone() {
        withDiskOf(4);
        RecordSpec a = root(1);
        publish(a);
        assertFalse(catalog.pinFile(a.key()), "no file yet");
        assertEquals(0, catalog.filePins());
        spillAll();
        assertTrue(catalog.pinFile(a.key()));
        assertTrue(catalog.pinFile(a.key()), "two restores read it");
        assertEquals(2, catalog.filePins());
        assertEquals(1, catalog.filesPinned(), "one file");
        catalog.unpinFile(a.key());
        assertEquals(1, catalog.filePins());
        catalog.unpinFile(a.key());
        catalog.unpinFile(a.key());
        assertEquals(0, catalog.filePins());
        assertTrue(catalog.pinFile(a.key()));
        catalog.fileLost(a.key());
        assertEquals(0, catalog.filesPinned(), "a file lost while a restore held it is read by nobody");
        catalog.unpinFile(a.key());
        assertEquals(0, catalog.filePins());
    }

    @Test
    void planSpills_whenRoomIsNeededForAChild_keepsItsAncestorsFiles() {
        withDiskOf(2);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        durableOnly(a);
        advance(10);
        catalog.recovered(List.of(new Recovered(a, ROW_FILE, 10), new Recovered(root(3), ROW_FILE, 0))); // 3 is newer
        publish(b);

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(b.key()), startedKeys(plan));
        assertEquals(List.of(key(3)), plan.removal().files(), "a is made the most recent first");
        assertEquals(State.DURABLE_ONLY, catalog.state(a.key()));
        assertEquals(Commit.COMMITTED, catalog.committed(b.key(), ROW_FILE));
    }

    @Test
    void planSpills_whenOnlyAncestorsFilesCouldMakeRoom_startsNothing() {
        withDiskOf(1);
        RecordSpec a = root(1);
        durableOnly(a);
        publish(child(2, a));

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(), plan.start());
        assertTrue(plan.removal().isEmpty());
        assertEquals(State.DURABLE_ONLY, catalog.state(a.key()));
        assertEquals(State.DIRTY, catalog.state(key(2)));
    }

    @Test
    void planSpills_whenAFileIsLargerThanTheWholeDisk_startsNothing() {
        withDisk(ROW_FILE - 1, 4);
        publish(root(1));

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(List.of(), plan.start());
        assertEquals(State.DIRTY, catalog.state(key(1)));
    }

    @Test
    void planSpills_countsTheRoomReservedByWritesInFlight() {
        withDiskOf(2);
        publishAll(root(1), root(2), root(3));

        assertEquals(List.of(key(1), key(2)), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
        assertEquals(State.DIRTY, catalog.state(key(3)));
    }

    @Test
    void fileLost_removesTheFileAndItsDescendantsFiles_residentOnesBecomeDirty() {
        withDiskOf(4);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        publishAll(a, b, c);
        spillAll();
        catalog.evictClean(Integer.MAX_VALUE); // all durable only
        catalog.adoptRestored(a, slotsFor(a));

        Removal r = catalog.fileLost(b.key());

        assertEquals(List.of(b.key(), c.key()), r.files());
        assertEquals(List.of(), r.slots());
        assertNull(catalog.state(b.key()));
        assertNull(catalog.state(c.key()));
        assertEquals(State.CLEAN, catalog.state(a.key()));

        Removal root = catalog.fileLost(a.key());
        assertEquals(List.of(a.key()), root.files());
        assertEquals(State.DIRTY, catalog.state(a.key()), "resident, so it must be written again");
    }

    @Test
    void fileLost_whenThereIsNoFile_changesNothing() {
        withDiskOf(4);
        publish(root(1));

        assertTrue(catalog.fileLost(key(1)).isEmpty());
        assertTrue(catalog.fileLost(key(9)).isEmpty());
        assertEquals(State.DIRTY, catalog.state(key(1)));
    }

    // ---- commit outcomes -----------------------------------------------------------------------------------

    @Test
    void committed_whenParentsFileWasLostMeanwhile_isParentGone() {
        withDiskOf(4);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        publish(a);
        spillAll();
        publish(b);
        assertEquals(List.of(b.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
        assertEquals(EvictResult.BUSY, catalog.evict(a.key()).result(), "b is being written under it");
        assertEquals(List.of(a.key()), catalog.fileLost(a.key()).files());

        assertEquals(Commit.PARENT_GONE, catalog.committed(b.key(), ROW_FILE));

        Info info = catalog.info(b.key());
        assertEquals(State.DIRTY, info.state());
        assertFalse(info.onDisk());
        assertEquals(0, info.pins());
        assertEquals(0, catalog.writesInFlight());
        assertEquals(List.of(a.key(), b.key()), spillAll(), "written again, parent first");
    }

    @Test
    void planSpills_neverEvictsTheFileOfAnAncestorOfAWriteInFlight() {
        withDiskOf(2);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        durableOnly(a);
        publishAll(b, root(3)); // dirty, coldest first: b, 3

        SpillPlan plan = catalog.planSpills(Long.MAX_VALUE);

        assertEquals(b.key(), startedKeys(plan).getFirst());
        assertFalse(plan.removal().files().contains(a.key()), "a's file was deleted under b's write");
        assertEquals(Commit.COMMITTED, catalog.committed(b.key(), ROW_FILE));
    }

    // ---- recovery ------------------------------------------------------------------------------------------

    @Test
    void recovered_addsDurableOnlyRecordsWithTheirAges_noAncestorOlderThanItsDescendants() {
        withDiskOf(4);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);

        Removal r = catalog.recovered(List.of(new Recovered(b, ROW_FILE, 50), new Recovered(a, ROW_FILE, 70)));

        assertTrue(r.isEmpty());
        Info info = catalog.info(b.key());
        assertEquals(State.DURABLE_ONLY, info.state());
        assertEquals(Where.DISK, info.where());
        assertEquals(50, info.idleNanos());
        assertEquals(50, catalog.info(a.key()).idleNanos(), "a's file is older, but its child b was used since");
        assertEquals(2, catalog.match(NS, chain(1, 2)).depth());
        assertEquals(2L * ROW_FILE, catalog.stats().diskBytes());
    }

    @Test
    void recovered_whenOverCapacity_evictsTheOldestWithDescendants() {
        withDiskOf(2);
        RecordSpec q = root(2);
        List<Recovered> found = List.of(new Recovered(root(1), ROW_FILE, 50), new Recovered(q, ROW_FILE, 300),
                new Recovered(root(3), ROW_FILE, 100), new Recovered(child(4, q), ROW_FILE, 10));

        Removal r = catalog.recovered(found);

        assertEquals(List.of(key(2), key(4)), r.files(), "the oldest and its (newest) child");
        assertEquals(State.DURABLE_ONLY, catalog.state(key(1)));
        assertEquals(State.DURABLE_ONLY, catalog.state(key(3)));
        assertEquals(2L * ROW_FILE, catalog.stats().diskBytes());
    }

    @Test
    void recovered_whenRecordIsResidentAndDirty_makesItClean() {
        withDiskOf(4);
        publish(root(1));

        catalog.recovered(List.of(new Recovered(root(1), ROW_FILE, 0)));

        catalog.checkInvariants();
        assertEquals(State.CLEAN, catalog.state(key(1)));
    }

    @Test
    void writeNeverRan_leavesTheRecordDirtyAndUnpinned_andTheNextPlanStartsItAgain() {
        withDiskOf(4);
        publish(root(1));
        assertEquals(List.of(key(1)), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
        assertEquals(State.BEING_WRITTEN, catalog.state(key(1)));

        catalog.writeNeverRan(key(1));

        assertEquals(State.DIRTY, catalog.state(key(1)));
        assertEquals(0, catalog.writesInFlight());
        assertEquals(0, catalog.info(key(1)).pins());
        assertEquals(List.of(key(1)), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "written again");
    }

    @Test
    void recovered_afterARestartOfTheStore_forgetsFilesThatAreGone_withTheirDescendants() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        durableOnly(a);
        durableOnly(b);
        durableOnly(root(3));

        Removal r = catalog.recovered(List.of(new Recovered(b, ROW_FILE, 0), new Recovered(root(3), ROW_FILE, 0)));

        assertNull(catalog.state(a.key()), "its file is gone");
        assertNull(catalog.state(b.key()), "a file never outlives its parent's");
        assertEquals(State.DURABLE_ONLY, catalog.state(key(3)));
        assertEquals(List.of(a.key(), b.key()), r.files());
    }

    @Test
    void recovered_whileAWriteIsInFlight_keepsRoomForIt() {
        withDiskOf(2);
        publish(root(1));
        assertEquals(List.of(key(1)), startedKeys(catalog.planSpills(Long.MAX_VALUE)));

        catalog.recovered(List.of(new Recovered(root(2), ROW_FILE, 20), new Recovered(root(3), ROW_FILE, 10)));

        catalog.checkInvariants();
        assertNull(catalog.state(key(2)), "the oldest file makes room for the reserved write");
    }

    @Test
    void setDurableCapacity_startsAtNothing_thenRaisesAndLowers_forgettingTheLeastRecentlyUsed() {
        catalog = new RecordCatalog(LAYOUT, true, 0, 4, clock::get, new dev.selene.engine.index.LruPolicy());
        publishAll(root(1), root(2), root(3));
        assertEquals(List.of(), startedKeys(catalog.planSpills(Long.MAX_VALUE)), "nothing is written before the "
                + "tier's capacity is known");

        assertTrue(catalog.setDurableCapacity(3 * ROW_FILE).isEmpty());
        assertEquals(List.of(key(1), key(2), key(3)), spillAll());
        assertEquals(List.of(key(1)), catalog.setDurableCapacity(2 * ROW_FILE).files(), "the least recently used");
        assertEquals(State.DIRTY, catalog.state(key(1)), "resident, so dirty again");
        assertTrue(catalog.setDurableCapacity(4 * ROW_FILE).isEmpty());
        assertEquals(4 * ROW_FILE, catalog.diskCapacityBytes());
    }

    // ---- expiry --------------------------------------------------------------------------------------------

    @Test
    void expire_removesRecordsOlderThanMaxAgeDescendantsFirst() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        publishAll(a, b, c);
        spillAll();
        catalog.evictClean(Integer.MAX_VALUE);
        catalog.adoptRestored(a, slotsFor(a)); // a resident and on disk; b, c on disk only
        advance(60);
        publish(root(4));
        advance(60);

        Removal r = catalog.expire(MAX_AGE_NANOS);

        assertEquals(List.of(c.key(), b.key(), a.key()), List.copyOf(new LinkedHashSet<>(r.removed())));
        assertEquals(List.of(c.key(), b.key(), a.key()), r.files());
        assertEquals(1, r.slots().size(), "a's slots");
        assertNull(catalog.state(a.key()));
        assertEquals(State.DIRTY, catalog.state(key(4)), "only 60 old");
    }

    @Test
    void expire_whenRecordIsExactlyMaxAge_keepsIt() {
        memoryOnly();
        publish(root(1));
        advance(MAX_AGE_NANOS);

        assertTrue(catalog.expire(MAX_AGE_NANOS).isEmpty());
        advance(1);
        assertEquals(List.of(key(1)), catalog.expire(MAX_AGE_NANOS).removed());
    }

    @Test
    void expire_removesAtMost64RecordsPerSweep() {
        memoryOnly();
        int records = ExpirySweep.MAX_RECORDS_PER_SWEEP + 6;
        for (int i = 1; i <= records; i++) {
            publish(root(i));
        }
        advance(MAX_AGE_NANOS + 1);

        assertEquals(64, catalog.expire(MAX_AGE_NANOS).removed().size());
        assertEquals(6, catalog.expire(MAX_AGE_NANOS).removed().size());
        assertTrue(catalog.expire(MAX_AGE_NANOS).isEmpty());
        assertEquals(0, catalog.stats().residentRecords());
    }

    @Test
    void expire_skipsASubtreeHoldingAPinnedRecord() {
        memoryOnly();
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        publishAll(a, b, root(3));
        assertTrue(catalog.pin(b.key()));
        advance(MAX_AGE_NANOS + 1);

        assertEquals(List.of(key(3)), catalog.expire(MAX_AGE_NANOS).removed());
        assertEquals(State.DIRTY, catalog.state(a.key()), "its child is pinned");

        catalog.unpin(b.key());
        assertEquals(List.of(b.key(), a.key()), catalog.expire(MAX_AGE_NANOS).removed());
    }

    @Test
    void expire_skipsARecordHeldWithoutItsRow_whileItsRowIsBeingPublished() {
        memoryOnly();
        RecordSpec a = pageOnly(1, null);
        publish(a);
        advance(MAX_AGE_NANOS + 1);
        publish(root(9));
        assertEquals(Admission.ADMITTED, catalog.admit(root(1)), "the row joins the pages held");

        assertEquals(List.of(), catalog.expire(MAX_AGE_NANOS).removed(), "its row is in flight");
        catalog.resident(root(1), slotsFor(root(1)));
        catalog.checkInvariants();
        assertTrue(catalog.info(a.key()).spec().hasRow());
    }

    @Test
    void expire_skipsAFileARestoreIsReading_andTakesItOnceTheReadIsOver() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = root(2);
        durableOnly(a);
        durableOnly(b);
        assertTrue(catalog.pinFile(a.key()));
        advance(MAX_AGE_NANOS + 1);

        assertEquals(List.of(b.key()), catalog.expire(MAX_AGE_NANOS).removed());
        assertEquals(State.DURABLE_ONLY, catalog.state(a.key()), "its file is being read");

        catalog.unpinFile(a.key());
        assertEquals(List.of(a.key()), catalog.expire(MAX_AGE_NANOS).removed());
    }

    @Test
    void limitDiskCapacity_keepsAFileARestoreIsReading() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = root(2);
        durableOnly(a);
        advance(10);
        durableOnly(b);
        assertTrue(catalog.pinFile(a.key()));

        Removal r = catalog.limitDiskCapacity(ROW_FILE);

        assertEquals(List.of(b.key()), r.files(), "a is the coldest but being read");
        assertEquals(State.DURABLE_ONLY, catalog.state(a.key()));
        assertEquals(ROW_FILE, catalog.diskCapacityBytes());
        catalog.checkInvariants();
    }

    @Test
    void limitDiskCapacity_belowAFileBeingRead_holdsTheTierAtThatFile_untilTheReadEnds_thenSettlesToTheSizeAskedFor() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = root(2);
        durableOnly(a);
        advance(10);
        durableOnly(b);
        assertTrue(catalog.pinFile(a.key()));

        assertEquals(List.of(b.key()), catalog.limitDiskCapacity(0).files(), "every file but the one being read");
        assertEquals(ROW_FILE, catalog.diskCapacityBytes(), "held at the file being read");
        catalog.checkInvariants();
        assertTrue(catalog.settleCapacity().isEmpty(), "the read is not over");

        catalog.unpinFile(a.key());
        assertEquals(List.of(a.key()), catalog.settleCapacity().files());
        assertEquals(0, catalog.diskCapacityBytes(), "the size asked for");
        assertTrue(catalog.settleCapacity().isEmpty(), "settled once");
        catalog.checkInvariants();
    }

    @Test
    void limitDiskCapacity_belowAWriteInFlight_holdsTheTierAtItsReservation_thenSettlesOnceItCommitted() {
        withDiskOf(8);
        RecordSpec old = root(1);
        durableOnly(old);
        publish(root(2));
        assertEquals(List.of(key(2)), startedKeys(catalog.planSpills(Long.MAX_VALUE)));

        assertEquals(List.of(old.key()), catalog.limitDiskCapacity(0).files());
        assertEquals(ROW_FILE, catalog.diskCapacityBytes(), "held at the write's reservation");
        assertEquals(Commit.COMMITTED, catalog.committed(key(2), ROW_FILE));

        assertEquals(List.of(key(2)), catalog.settleCapacity().files(), "the size asked for applies now");
        assertEquals(0, catalog.diskCapacityBytes());
        assertEquals(State.DIRTY, catalog.state(key(2)), "resident, its file gone: dirty again");
        catalog.checkInvariants();
    }

    @Test
    void setDurableCapacity_raisedWhileALowerOneWasPending_dropsThePendingOne() {
        withDiskOf(8);
        RecordSpec a = root(1);
        durableOnly(a);
        assertTrue(catalog.pinFile(a.key()));
        catalog.setDurableCapacity(0);
        assertEquals(ROW_FILE, catalog.diskCapacityBytes());

        catalog.setDurableCapacity(4 * ROW_FILE);
        catalog.unpinFile(a.key());

        assertTrue(catalog.settleCapacity().isEmpty());
        assertEquals(4 * ROW_FILE, catalog.diskCapacityBytes());
        assertEquals(State.DURABLE_ONLY, catalog.state(a.key()));
    }

    @Test
    void expire_skipsASubtreeHoldingARecordBeingWritten() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        publish(a);
        spillAll();
        publish(b);
        assertEquals(List.of(b.key()), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
        advance(MAX_AGE_NANOS + 1);

        assertTrue(catalog.expire(MAX_AGE_NANOS).isEmpty());
        assertEquals(State.CLEAN, catalog.state(a.key()), "its child is being written");
        assertEquals(State.BEING_WRITTEN, catalog.state(b.key()));
    }

    @Test
    void expire_afterARestart_anOldRootKeepsItsFreshSubtree_andStaleLeavesGo() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        // a's and b's files are old, c (used just before the restart) is fresh; 4 and 5 are stale unrelated roots.
        catalog.recovered(List.of(new Recovered(a, ROW_FILE, 500), new Recovered(b, ROW_FILE, 400),
                new Recovered(c, ROW_FILE, 10), new Recovered(root(4), ROW_FILE, 300),
                new Recovered(root(5), ROW_FILE, 200)));

        Removal r = catalog.expire(MAX_AGE_NANOS);

        assertEquals(List.of(key(4), key(5)), r.removed(), "the stale leaves, oldest first");
        assertEquals(3, catalog.match(NS, chain(1, 2, 3)).depth(), "the fresh chain whole");
        advance(MAX_AGE_NANOS);
        assertEquals(List.of(c.key(), b.key(), a.key()), catalog.expire(MAX_AGE_NANOS).removed(),
                "once c is stale, the chain leaves from its tip");
    }

    @Test
    void expire_takesTheOldest64Leaves_andLeavesAChainWithAFreshTipWhole() {
        memoryOnly();
        RecordSpec p = root(1000);
        publish(p); // the oldest record of all
        int stale = ExpirySweep.MAX_RECORDS_PER_SWEEP + 6;
        for (int i = 1; i <= stale; i++) {
            publish(root(i));
            advance(1);
        }
        advance(MAX_AGE_NANOS);
        publish(child(1001, p)); // p's child, published now: p is fresh again
        publish(root(2000));

        Removal first = catalog.expire(MAX_AGE_NANOS);

        List<RecordKey> oldest64 = IntStream.rangeClosed(1, 64).mapToObj(RecordCatalogTest::key).toList();
        assertEquals(oldest64, first.removed());
        assertEquals(List.of(key(65), key(66), key(67), key(68), key(69), key(70)),
                catalog.expire(MAX_AGE_NANOS).removed());
        assertTrue(catalog.expire(MAX_AGE_NANOS).isEmpty());
        assertEquals(2, catalog.match(NS, chain(1000, 1001)).depth());
        assertEquals(State.DIRTY, catalog.state(key(2000)));
    }

    @Test
    void resident_aChildsPublication_refreshesItsAncestorsWithoutMakingThemMoreRecent() {
        withDiskOf(8);
        RecordSpec a = root(1);
        RecordSpec x = root(9);
        publishAll(a, x);
        spillAll(); // both clean: a is the coldest droppable record, x the next
        advance(80);
        publish(child(2, a)); // refreshes a's last use, not its place in memory's recency order
        advance(40); // a's own publication is 120 old, its child's 40

        assertEquals(40, catalog.info(a.key()).idleNanos());
        assertEquals(List.of(x.key()), catalog.expire(MAX_AGE_NANOS).removed(), "only x, unrefreshed, is stale");
        assertEquals(List.of(a.key()), catalog.evictClean(1).removed(), "a is still the coldest in memory");
        assertEquals(State.DURABLE_ONLY, catalog.state(a.key()));
    }

    @Test
    void used_refreshesADiskOnlyAncestor_withoutMakingItMoreRecentOnDisk() {
        withDiskOf(4);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec z = root(5);
        // On disk, least recently used first: a, 3, z.
        catalog.recovered(List.of(new Recovered(a, ROW_FILE, 0), new Recovered(root(3), ROW_FILE, 0),
                new Recovered(z, ROW_FILE, 0)));
        publish(b); // resident only; its parent a is on disk only
        advance(80);

        catalog.used(z.key(), List.of(z.key())); // z read from disk: the most recent file
        catalog.used(b.key(), List.of()); // b restored from memory: a's last use is refreshed, its place kept
        advance(40);

        assertEquals(40, catalog.info(a.key()).idleNanos());
        assertEquals(List.of(key(3)), catalog.expire(MAX_AGE_NANOS).removed());
        assertEquals(State.DURABLE_ONLY, catalog.state(a.key()));
        catalog.limitDiskCapacity(ROW_FILE);
        assertNull(catalog.state(a.key()), "a, still the least recently used file, made the room");
        assertEquals(State.DURABLE_ONLY, catalog.state(z.key()));
    }

    @Test
    void expire_whenMaxAgeIsNotPositive_isRejected() {
        memoryOnly();
        assertThrows(IllegalArgumentException.class, () -> catalog.expire(0));
    }

    @Test
    void used_refreshesTheLastUseOfResidentAncestorsSoExpirySparesThem() {
        memoryOnly();
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        publishAll(a, b, c, root(4));
        advance(80);

        catalog.used(c.key(), List.of());
        advance(40);

        assertEquals(40, catalog.info(a.key()).idleNanos());
        assertEquals(List.of(key(4)), catalog.expire(MAX_AGE_NANOS).removed());
        assertEquals(State.DIRTY, catalog.state(a.key()));
    }

    @Test
    void used_refreshesTheDiskRecordsReadForTheRestore() {
        withDiskOf(4);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        catalog.recovered(List.of(new Recovered(a, ROW_FILE, 0), new Recovered(root(3), ROW_FILE, 0)));
        publish(b);
        advance(80);

        catalog.used(b.key(), List.of(a.key()));
        advance(40);

        assertEquals(List.of(key(3)), catalog.expire(MAX_AGE_NANOS).removed());
        assertEquals(State.DURABLE_ONLY, catalog.state(a.key()));
    }

    @Test
    void used_makesTheDeepestRecordTheHottestInMemory() {
        withDiskOf(4);
        publishAll(root(1), root(2));
        spillAll();

        catalog.used(key(1), List.of());

        assertEquals(List.of(key(2)), catalog.evictClean(1).removed());
    }

    // ---- pins ----------------------------------------------------------------------------------------------

    @Test
    void pin_whenNotResident_isRefused() {
        withDiskOf(4);
        durableOnly(root(1));
        catalog.admit(root(2));

        assertFalse(catalog.pin(key(1)));
        assertFalse(catalog.pin(key(2)));
        assertFalse(catalog.pin(key(3)));
        catalog.unpin(key(3)); // nothing to release: no error
    }

    @Test
    void pin_keepsACleanRecordFromBeingDropped() {
        withDiskOf(4);
        publish(root(1));
        spillAll();

        assertTrue(catalog.pin(key(1)));

        assertEquals(0, catalog.cleanSlots());
        assertTrue(catalog.evictClean(Integer.MAX_VALUE).isEmpty());
        assertEquals(1, catalog.info(key(1)).pins());
        catalog.unpin(key(1));
        assertEquals(ROW_SLOTS, catalog.cleanSlots());
    }

    // ---- operator eviction ---------------------------------------------------------------------------------

    @Test
    void evict_whenKeyUnknown_isNotFound() {
        withDiskOf(4);
        Eviction e = catalog.evict(key(1));

        assertEquals(EvictResult.NOT_FOUND, e.result());
        assertTrue(e.removal().isEmpty());
    }

    @Test
    void evict_whenKeyInFlight_isBusy() {
        withDiskOf(4);
        catalog.admit(root(1));

        assertEquals(EvictResult.BUSY, catalog.evict(key(1)).result());
        assertEquals(State.IN_FLIGHT, catalog.state(key(1)));
    }

    @Test
    void evict_whenRecordOrADescendantIsPinned_isBusy() {
        memoryOnly();
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        publishAll(a, b);
        catalog.pin(b.key());

        Eviction e = catalog.evict(a.key());

        assertEquals(EvictResult.BUSY, e.result());
        assertTrue(e.removal().isEmpty());
        assertEquals(EvictResult.BUSY, catalog.evict(b.key()).result());
        assertEquals(State.DIRTY, catalog.state(a.key()));
    }

    @Test
    void evict_whenRecordBeingWritten_isBusy() {
        withDiskOf(4);
        publish(root(1));
        catalog.planSpills(Long.MAX_VALUE);

        assertEquals(EvictResult.BUSY, catalog.evict(key(1)).result());
        assertEquals(State.BEING_WRITTEN, catalog.state(key(1)));
    }

    @Test
    void evict_removesTheRecordAndItsDescendantsFromMemoryAndDisk() {
        withDiskOf(4);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        RecordSpec c = child(3, b);
        SlotList aSlots = publish(a);
        publish(b);
        spillAll();
        catalog.admit(a); // b is now the coldest clean record
        assertEquals(List.of(b.key()), catalog.evictClean(1).removed());
        SlotList cSlots = publish(c); // a clean, b on disk only, c dirty
        publish(root(4));

        Eviction e = catalog.evict(a.key());

        assertEquals(EvictResult.EVICTED, e.result());
        assertEquals(Set.of(a.key(), b.key(), c.key()), keySet(e.removal().removed()));
        assertEquals(Set.of(aSlots, cSlots), new HashSet<>(e.removal().slots()));
        assertEquals(Set.of(a.key(), b.key()), keySet(e.removal().files()));
        for (RecordKey k : keys(a, b, c)) {
            assertNull(catalog.state(k), k + " gone");
        }
        assertEquals(State.DIRTY, catalog.state(key(4)));
        assertEquals(0, catalog.stats().diskRecords());
    }

    @Test
    void evict_ofADescendant_keepsItsAncestors() {
        memoryOnly();
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        publishAll(a, b, child(3, b));

        Eviction e = catalog.evict(b.key());

        assertEquals(EvictResult.EVICTED, e.result());
        assertEquals(List.of(key(3), b.key()), e.removal().removed());
        assertEquals(State.DIRTY, catalog.state(a.key()));
    }

    // ---- views ---------------------------------------------------------------------------------------------

    @Test
    void state_followsTheRecordsLifecycle() {
        withDiskOf(4);
        RecordSpec a = root(1);
        assertNull(catalog.state(a.key()));
        catalog.admit(a);
        assertEquals(State.IN_FLIGHT, catalog.state(a.key()));
        catalog.resident(a, slotsFor(a));
        assertEquals(State.DIRTY, catalog.state(a.key()));
        catalog.planSpills(Long.MAX_VALUE);
        assertEquals(State.BEING_WRITTEN, catalog.state(a.key()));
        catalog.committed(a.key(), ROW_FILE);
        assertEquals(State.CLEAN, catalog.state(a.key()));
        catalog.evictClean(1);
        assertEquals(State.DURABLE_ONLY, catalog.state(a.key()));
        catalog.evict(a.key());
        assertNull(catalog.state(a.key()));
    }

    @Test
    void stateLabels_areShortLowercaseWords() {
        assertEquals(List.of("in_flight", "dirty", "being_written", "clean", "durable_only"),
                Arrays.stream(State.values()).map(State::label).toList());
    }

    @Test
    void info_ofACleanRecord_isInMemoryAndOnDisk() {
        withDiskOf(4);
        SlotList s = publish(root(1));
        spillAll();
        catalog.pin(key(1));
        advance(25);

        Info info = catalog.info(key(1));

        assertEquals(new Info(root(1), State.CLEAN, Where.MEMORY, s.count(), 1, true, 25), info);
        assertEquals(key(1), info.key());
    }

    @Test
    void info_ofADiskOnlyRecord_holdsNoSlots() {
        withDiskOf(4);
        catalog.recovered(List.of(new Recovered(pageOnly(1, null), PAGE_FILE, 7)));

        assertEquals(new Info(pageOnly(1, null), State.DURABLE_ONLY, Where.DISK, 0, 0, true, 7),
                catalog.info(key(1)));
    }

    @Test
    void info_ofAnInFlightRecord_holdsNothingYet() {
        withDiskOf(4);
        catalog.admit(root(1));
        advance(5);

        assertEquals(new Info(root(1), State.IN_FLIGHT, Where.MEMORY, 0, 0, false, 0), catalog.info(key(1)));
    }

    @Test
    void info_whenUnknown_isNull() {
        withDiskOf(4);
        assertNull(catalog.info(key(1)));
        assertNull(catalog.describe(key(1)));
    }

    @Test
    void list_ordersByNamespaceThenUnsignedHash() {
        memoryOnly();
        RecordSpec high = new RecordSpec(new RecordKey("a", -1L), null, true);
        RecordSpec low = new RecordSpec(new RecordKey("a", 1L), null, true);
        RecordSpec other = new RecordSpec(new RecordKey("B", 5L), null, true);
        publishAll(high, other, low);

        List<RecordKey> listed = catalog.list(null, null).stream().map(Info::key).toList();

        assertEquals(List.of(other.key(), low.key(), high.key()), listed, "'B' < 'a'; 0xff..ff is the largest");
    }

    @Test
    void list_filtersByNamespaceAndTier() {
        withDiskOf(4);
        durableOnly(root(2));
        publish(root(1));
        spillAll(); // 1 clean
        publish(root(3)); // dirty
        catalog.admit(root(4)); // in flight: in no tier yet
        RecordSpec elsewhere = new RecordSpec(new RecordKey("other", 1), null, true);
        publish(elsewhere);

        assertEquals(List.of(key(1), key(3)), listKeys(NS, Where.MEMORY));
        assertEquals(List.of(key(1), key(2)), listKeys(NS, Where.DISK));
        assertEquals(List.of(key(1), key(2), key(3)), listKeys(NS, null));
        assertEquals(List.of(elsewhere.key()), listKeys("other", null));
        assertEquals(4, catalog.list(null, null).size());
    }

    private List<RecordKey> listKeys(String namespace, Where where) {
        return catalog.list(namespace, where).stream().map(Info::key).toList();
    }

    @Test
    void describe_givesTheChainRootFirstAcrossTiers() {
        withDiskOf(4);
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        durableOnly(a);
        publish(b);

        Description d = catalog.describe(b.key());

        assertEquals(catalog.info(b.key()), d.record());
        assertEquals(List.of(catalog.info(a.key()), catalog.info(b.key())), d.chain());
        assertTrue(d.complete());
    }

    @Test
    void describe_whenParentIsMissing_isIncomplete() {
        memoryOnly();
        RecordSpec b = child(2, root(1));
        RecordSpec c = child(3, b);
        publishAll(b, c);

        Description d = catalog.describe(c.key());

        assertEquals(List.of(b.key(), c.key()), d.chain().stream().map(Info::key).toList());
        assertFalse(d.complete());
    }

    @Test
    void describe_ofAnInFlightRecord_isIncomplete() {
        memoryOnly();
        catalog.admit(root(1));

        Description d = catalog.describe(key(1));

        assertEquals(State.IN_FLIGHT, d.record().state());
        assertFalse(d.complete());
    }

    @Test
    void describe_whenAnAncestorIsOnlyInFlight_isIncomplete() {
        memoryOnly();
        RecordSpec a = root(1);
        RecordSpec b = child(2, a);
        catalog.admit(a);
        publish(b);
        assertEquals(0, catalog.match(NS, chain(1, 2)).depth());

        assertFalse(catalog.describe(b.key()).complete());
    }

    @Test
    void stats_countEveryState() {
        withDisk(8 * ROW_FILE, 1);
        durableOnly(root(2));
        publish(root(1));
        spillAll(); // clean
        publishAll(root(3), root(4)); // 3 is written, 4 stays dirty
        assertEquals(List.of(key(3)), startedKeys(catalog.planSpills(Long.MAX_VALUE)));
        catalog.admit(root(5));

        Stats s = catalog.stats();

        assertAll(() -> assertEquals(3, s.residentRecords()),
                () -> assertEquals(3L * ROW_SLOTS, s.residentSlots()),
                () -> assertEquals(ROW_SLOTS, s.cleanSlots()),
                () -> assertEquals(2L * ROW_SLOTS, s.dirtySlots(), "the record being written is still dirty"),
                () -> assertEquals(1, s.inFlight()),
                () -> assertEquals(2, s.diskRecords()),
                () -> assertEquals(2 * ROW_FILE, s.diskBytes()),
                () -> assertEquals(1, s.writing()),
                () -> assertEquals(ROW_SLOTS, s.writingSlots()),
                () -> assertEquals(2, catalog.dirtyRecords()));
    }
}
