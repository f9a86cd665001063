package dev.selene.engine.catalog;

import dev.selene.engine.catalog.RecordCatalog.Admission;
import dev.selene.engine.catalog.RecordCatalog.Commit;
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
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.index.LruPolicy;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.policy.WorthPolicy;
import dev.selene.engine.slots.SlotList;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random publications, spills, commits, failures, lookups, restores, pins, evictions, expiry and lost files driven
 * through one catalog by a simulated owner, with a disk and memory-only. The owner keeps its own account of the
 * slots and files it handed over; after every step the catalog's invariants hold and it agrees with that account
 * (no slot or file leaked or released twice), every write starts under a committed parent and within the cap, and
 * every match is the deepest one the states allow. At the end everything is evicted and nothing is left. The seed
 * is printed; rerun a failure with {@code -Dselene.seed=N}.
 */
class RecordCatalogRandomisedTest {

    private static final int STEPS = 4_000;
    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "ns";
    private static final long ROW_FILE = RecordFileFormat.fileLength(LAYOUT, true);

    @ParameterizedTest(name = "memoryOnly={0}")
    @ValueSource(booleans = {false, true})
    void randomTraffic_keepsTheCatalogConsistentWithItsOwner(boolean memoryOnly) {
        long seed = Long.getLong("selene.seed", System.nanoTime());
        System.out.println("RecordCatalogRandomisedTest memoryOnly=" + memoryOnly + " seed=" + seed);
        Owner owner = new Owner(seed, memoryOnly);
        try {
            owner.run();
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed=" + seed + " memoryOnly=" + memoryOnly + " " + owner.at + ": " + e, e);
        }
    }

    /** The catalog's owner as the actors would be, reduced to bookkeeping. */
    private static final class Owner {
        private final Random random;
        private final boolean memoryOnly;
        private final AtomicLong clock = new AtomicLong(1_000_000);
        private final int spillCap;
        private final RecordCatalog catalog;
        private final Map<RecordKey, RecordSpec> specs = new HashMap<>();
        private final List<RecordKey> everSeen = new ArrayList<>();
        /** Slots handed to the catalog and not yet given back, by the key they went in with. */
        private final Map<SlotList, RecordKey> owned = new HashMap<>();
        /** Files committed (or found at start) and not yet deleted. */
        private final Set<RecordKey> files = new HashSet<>();
        private final Set<RecordKey> inFlight = new HashSet<>();
        private final List<RecordKey> writes = new ArrayList<>();
        private final Map<RecordKey, Integer> pins = new HashMap<>();
        private int nextSlot;
        private String at = "setup";

        Owner(long seed, boolean memoryOnly) {
            this.random = new Random(seed);
            this.memoryOnly = memoryOnly;
            this.spillCap = 1 + random.nextInt(4);
            long capacity = memoryOnly ? 0 : (3 + random.nextInt(10)) * ROW_FILE;
            // memory only: a policy that drops rows apart from their pages, so row drops are exercised too
            this.catalog = new RecordCatalog(LAYOUT, capacity, spillCap, clock::get,
                    memoryOnly ? new WorthPolicy() : new LruPolicy());
        }

        void run() {
            if (!memoryOnly) {
                recoverSomeChains();
            }
            for (int step = 0; step < STEPS; step++) {
                at = "step=" + step;
                clock.addAndGet(random.nextInt(20));
                step();
                verify();
            }
            at = "drain";
            releaseEverything();
            verify();
            at = "evict all";
            evictEverything();
        }

        // ---- operations ----------------------------------------------------------------------------------

        private void step() {
            int op = random.nextInt(100);
            if (op < 20) {
                publishNew();
            } else if (op < 38) {
                endPublication();
            } else if (op < 41) {
                readmit();
            } else if (op < 53) {
                plan();
            } else if (op < 65) {
                endWrite();
            } else if (op < 69) {
                evictClean();
            } else if (op < 73) {
                pin();
            } else if (op < 79) {
                unpin();
            } else if (op < 91) {
                matchAndUse();
            } else if (op < 93) {
                expire();
            } else if (op < 94) {
                evict();
            } else if (op < 96) {
                fileLost();
            } else {
                adoptRestored();
            }
        }

        private void recoverSomeChains() {
            List<Recovered> found = new ArrayList<>();
            for (int chain = random.nextInt(4); chain > 0; chain--) {
                RecordSpec parent = null;
                long age = 1_000 + random.nextInt(1_000);
                for (int depth = 1 + random.nextInt(4); depth > 0; depth--) {
                    RecordSpec spec = newSpec(parent);
                    found.add(new Recovered(spec, fileOf(spec), age));
                    age -= random.nextInt(500);
                    parent = spec;
                }
            }
            found.forEach(r -> files.add(r.spec().key()));
            apply(catalog.recovered(found));
        }

        private void publishNew() {
            RecordKey some = random.nextInt(8) == 0 && !inFlight.isEmpty() ? pick(inFlight) : someLive();
            RecordSpec parent = some == null || random.nextInt(5) == 0 ? null : specs.get(some);
            RecordSpec spec = newSpec(parent);
            assertEquals(Admission.ADMITTED, catalog.admit(spec), "a new key");
            inFlight.add(spec.key());
        }

        private void endPublication() {
            if (inFlight.isEmpty()) {
                return;
            }
            RecordKey key = pick(inFlight);
            inFlight.remove(key);
            if (random.nextInt(7) == 0) {
                catalog.publicationEnded(key);
                // an abandoned row leaves the record it was meant for as it was
                assertEquals(catalog.slotsOf(key) == null ? null : State.DIRTY, catalog.state(key));
                return;
            }
            SlotList slots = freshSlots(specs.get(key));
            SlotList held = catalog.slotsOf(key);
            SlotList surplus = catalog.resident(specs.get(key), slots);
            if (held == null) {
                assertNull(surplus);
                owned.put(slots, key);
            } else {
                // a row published at a record held without one joins its pages; the copy's pages come back
                int pages = held.count();
                assertEquals(slots.slice(0, pages), surplus, "the publication's pages come back");
                assertEquals(key, owned.remove(held));
                SlotList joined = SlotList.concat(held, slots.slice(pages, slots.count()));
                assertEquals(joined, catalog.slotsOf(key), "the record keeps its pages and takes the row");
                owned.put(joined, key);
                assertTrue(catalog.info(key).spec().hasRow());
            }
            assertEquals(State.DIRTY, catalog.state(key));
        }

        private void readmit() {
            RecordKey key = someLive();
            if (key == null) {
                return;
            }
            State before = catalog.state(key);
            SlotList held = catalog.slotsOf(key);
            boolean rowMissing = held != null && !catalog.info(key).spec().hasRow() && specs.get(key).hasRow();
            Admission a = catalog.admit(specs.get(key));
            if (inFlight.contains(key)) {
                assertEquals(Admission.IN_FLIGHT, a);
            } else if (memoryOnly && rowMissing) {
                assertEquals(Admission.ADMITTED, a, "a row for a record whose row was dropped");
                inFlight.add(key);
            } else if (before == null) {
                assertEquals(Admission.ADMITTED, a);
                inFlight.add(key);
            } else if (before == State.IN_FLIGHT) {
                assertEquals(Admission.IN_FLIGHT, a);
            } else {
                assertEquals(Admission.PRESENT, a);
                assertEquals(before, catalog.state(key), "a duplicate changes no state");
            }
        }

        private void plan() {
            long target = random.nextBoolean() ? Long.MAX_VALUE : random.nextInt(40);
            SpillPlan plan = catalog.planSpills(target);
            if (memoryOnly) {
                assertTrue(plan.start().isEmpty() && plan.removal().isEmpty() && plan.orphans().isEmpty(),
                        "nothing to plan without a disk");
                return;
            }
            for (SpillStart s : plan.start()) {
                RecordKey key = s.spec().key();
                assertFalse(writes.contains(key), key + " started twice");
                assertEquals(State.BEING_WRITTEN, catalog.state(key));
                assertEquals(catalog.slotsOf(key), s.slots());
                RecordKey parent = s.spec().parent();
                // Checked against the files before this plan: its removal may take the parent's file again (see
                // RecordCatalogTest.planSpills_neverEvictsTheFileOfAnAncestorOfAWriteInFlight).
                assertTrue(parent == null || files.contains(parent), key + " started before its parent committed");
                writes.add(key);
            }
            assertEquals(List.of(), plan.removal().slots(), "room is made by removing files only");
            assertEquals(List.of(), plan.orphans().files(), "orphans are dirty: they have no files");
            apply(plan.removal());
            apply(plan.orphans());
            for (RecordKey k : plan.orphans().removed()) {
                assertNull(catalog.state(k), "orphan " + k + " still known");
            }
            assertTrue(catalog.writesInFlight() <= spillCap, "in-flight cap");
        }

        private void endWrite() {
            if (writes.isEmpty()) {
                return;
            }
            RecordKey key = writes.remove(random.nextInt(writes.size()));
            RecordSpec spec = specs.get(key);
            if (random.nextInt(7) == 0) {
                apply(catalog.writeFailed(key));
                State after = catalog.state(key);
                assertTrue(after == null || pins.containsKey(key), key + " left as " + after);
                return;
            }
            Commit c = catalog.committed(key, fileOf(spec));
            switch (c) {
                case COMMITTED -> {
                    files.add(key);
                    assertEquals(State.CLEAN, catalog.state(key));
                }
                case PARENT_GONE -> {
                    assertFalse(files.contains(spec.parent()), "the parent's file is there");
                    assertEquals(State.DIRTY, catalog.state(key));
                }
                case RECORD_GONE -> assertNull(catalog.slotsOf(key), "the record is resident");
            }
        }

        private void evictClean() {
            int wanted = 1 + random.nextInt(20);
            Removal r = catalog.evictClean(wanted);
            apply(r);
            long freed = r.slots().stream().mapToLong(SlotList::count).sum();
            assertTrue(freed >= wanted || catalog.cleanSlots() == 0, "stopped early");
            for (RecordKey k : r.removed()) {
                assertFalse(pins.containsKey(k), "dropped pinned " + k);
                assertEquals(memoryOnly ? inFlight.contains(k) ? State.IN_FLIGHT : null : State.DURABLE_ONLY,
                        catalog.state(k), k + " after evictClean");
            }
            if (memoryOnly) {
                Set<RecordKey> removed = new HashSet<>(r.removed());
                for (Info i : catalog.list(null, Where.MEMORY)) {
                    assertFalse(removed.contains(i.spec().parent()), "a parent dropped before " + i.key());
                }
            }
        }

        private void pin() {
            RecordKey key = someLive();
            if (key == null) {
                return;
            }
            boolean resident = catalog.slotsOf(key) != null;
            assertEquals(resident, catalog.pin(key));
            if (resident) {
                pins.merge(key, 1, Integer::sum);
            }
        }

        private void unpin() {
            if (pins.isEmpty()) {
                return;
            }
            RecordKey key = pick(pins.keySet());
            assertNotNull(catalog.slotsOf(key), "a pinned record left memory");
            catalog.unpin(key);
            pins.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
        }

        private void matchAndUse() {
            RecordKey key = someLive();
            if (key == null) {
                return;
            }
            List<RecordKey> chain = new ArrayList<>();
            for (RecordKey k = key; k != null; k = specs.get(k).parent()) {
                chain.addFirst(k);
            }
            if (random.nextInt(4) == 0) {
                chain = chain.subList(random.nextInt(chain.size()), chain.size());
            }
            long[] hashes = chain.stream().mapToLong(RecordKey::hash).toArray();
            Match m = catalog.match(NS, hashes);

            int expected = 0;
            // A chain is matched from its root: one cut from the middle of another matches nothing.
            boolean fromRoot = specs.get(chain.getFirst()).parent() == null;
            for (int i = 0; fromRoot && i < chain.size(); i++) {
                State s = catalog.state(chain.get(i));
                if (s == null || s == State.IN_FLIGHT) {
                    break;
                }
                if (catalog.info(chain.get(i)).spec().hasRow()) { // a dropped row is gone, its pages stay
                    expected = i + 1;
                }
            }
            assertEquals(expected, m.depth(), "match depth of " + chain);
            assertEquals(m.depth() == 0, !m.missReason().isEmpty(), "a reason exactly when it misses");
            List<RecordKey> fromDisk = new ArrayList<>();
            for (int i = 0; i < m.depth(); i++) {
                Located l = m.records().get(i);
                assertEquals(chain.get(i), l.spec().key());
                assertEquals(catalog.slotsOf(l.spec().key()) != null ? Where.MEMORY : Where.DISK, l.where());
                if (l.where() == Where.DISK) {
                    fromDisk.add(l.spec().key());
                }
            }
            if (m.depth() > 0 && random.nextBoolean()) {
                RecordKey deepest = m.records().getLast().spec().key();
                catalog.used(deepest, fromDisk);
                assertEquals(0, catalog.info(deepest).idleNanos(), "used just now");
            }
        }

        private void expire() {
            long maxAge = 1 + random.nextInt(3_000);
            Set<RecordKey> busy = new HashSet<>(pins.keySet());
            busy.addAll(writes);
            Removal r = catalog.expire(maxAge);
            apply(r);
            Set<RecordKey> removed = new LinkedHashSet<>(r.removed());
            assertTrue(removed.size() <= ExpirySweep.MAX_RECORDS_PER_SWEEP, removed.size() + " in one sweep");
            for (RecordKey k : removed) {
                assertFalse(busy.contains(k), "expired busy " + k);
                assertEquals(inFlight.contains(k) ? State.IN_FLIGHT : null, catalog.state(k),
                        k + " still known after expiry (a row in flight for it stays in flight)");
            }
        }

        private void evict() {
            RecordKey key = someLive();
            if (key == null) {
                return;
            }
            State before = catalog.state(key);
            Eviction e = catalog.evict(key);
            apply(e.removal());
            if (before == null) {
                assertEquals(EvictResult.NOT_FOUND, e.result());
            } else if (before == State.IN_FLIGHT) {
                assertEquals(EvictResult.BUSY, e.result());
            } else if (e.result() == EvictResult.EVICTED) {
                assertFalse(pins.containsKey(key) || writes.contains(key), "evicted busy " + key);
                assertEquals(inFlight.contains(key) ? State.IN_FLIGHT : null, catalog.state(key));
            } else {
                assertEquals(EvictResult.BUSY, e.result());
                assertTrue(e.removal().isEmpty());
            }
        }

        private void fileLost() {
            if (files.isEmpty()) {
                return;
            }
            RecordKey key = pick(files);
            apply(catalog.fileLost(key));
            assertFalse(files.contains(key));
        }

        private void adoptRestored() {
            if (memoryOnly || files.isEmpty()) {
                return;
            }
            RecordKey key = pick(files);
            SlotList slots = freshSlots(specs.get(key));
            boolean resident = catalog.slotsOf(key) != null;
            assertEquals(!resident, catalog.adoptRestored(specs.get(key), slots));
            if (!resident) {
                owned.put(slots, key);
                assertEquals(State.CLEAN, catalog.state(key));
            }
        }

        // ---- end -----------------------------------------------------------------------------------------

        private void releaseEverything() {
            for (RecordKey k : List.copyOf(inFlight)) {
                catalog.publicationEnded(k);
            }
            inFlight.clear();
            pins.forEach((k, n) -> {
                for (int i = 0; i < n; i++) {
                    catalog.unpin(k);
                }
            });
            pins.clear();
            while (!writes.isEmpty()) {
                endWrite();
            }
            assertEquals(0, catalog.writesInFlight());
        }

        private void evictEverything() {
            for (Info i : catalog.list(null, null)) {
                Eviction e = catalog.evict(i.key());
                apply(e.removal());
                assertTrue(e.result() != EvictResult.BUSY, "nothing is busy any more: " + i.key());
            }
            catalog.checkInvariants();
            assertEquals(Map.of(), owned, "slots the catalog never gave back");
            assertEquals(Set.of(), files, "files the catalog never deleted");
            assertEquals(new Stats(0, 0, 0, 0, 0, 0, 0, 0, 0), catalog.stats());
        }

        // ---- bookkeeping ---------------------------------------------------------------------------------

        /**
         * Carries out a removal as the owner does: every slot list and file it names must be outstanding; a dropped
         * row's slots are the tail of its record's, whose pages stay.
         */
        private void apply(Removal r) {
            for (SlotList s : r.slots()) {
                if (owned.remove(s) == null) {
                    SlotList whole = null;
                    for (SlotList o : owned.keySet()) {
                        if (o.count() > s.count() && o.slice(o.count() - s.count(), o.count()).equals(s)) {
                            whole = o;
                        }
                    }
                    assertNotNull(whole, "slots " + s + " freed twice or never handed in");
                    RecordKey k = owned.remove(whole);
                    assertTrue(r.rowsDropped().contains(k), "a part of " + k + "'s slots freed, its row not dropped");
                    owned.put(whole.slice(0, whole.count() - s.count()), k);
                }
            }
            for (RecordKey f : r.files()) {
                assertTrue(files.remove(f), "file " + f + " deleted twice or never committed");
            }
        }

        private void verify() {
            catalog.checkInvariants();
            Map<SlotList, RecordKey> resident = new HashMap<>();
            for (Info i : catalog.list(null, Where.MEMORY)) {
                resident.put(catalog.slotsOf(i.key()), i.key());
            }
            assertEquals(owned, resident, "resident slots against the owner's account");
            Set<RecordKey> onDisk = new HashSet<>();
            for (Info i : catalog.list(null, Where.DISK)) {
                onDisk.add(i.key());
                assertTrue(i.onDisk());
            }
            assertEquals(files, onDisk, "files against the owner's account");
            Stats s = catalog.stats();
            assertEquals(owned.keySet().stream().mapToLong(SlotList::count).sum(), s.residentSlots());
            assertEquals(inFlight.size(), s.inFlight());
            assertEquals(writes.size(), s.writing());
            for (RecordKey k : inFlight) {
                // a row in flight for a record held without one: the record stays resident meanwhile
                assertEquals(catalog.slotsOf(k) == null ? State.IN_FLIGHT : State.DIRTY, catalog.state(k));
            }
            for (RecordKey k : writes) {
                assertEquals(State.BEING_WRITTEN, catalog.state(k));
            }
            assertTrue(catalog.writesInFlight() <= spillCap);
        }

        private RecordSpec newSpec(RecordSpec parent) {
            RecordSpec spec = new RecordSpec(new RecordKey(NS, random.nextLong()), parent == null ? null
                    : parent.key(), random.nextInt(3) > 0);
            specs.put(spec.key(), spec);
            everSeen.add(spec.key());
            return spec;
        }

        private RecordKey some() {
            return everSeen.isEmpty() ? null : everSeen.get(random.nextInt(everSeen.size()));
        }

        /** Mostly a key the catalog holds now; sometimes any key ever made (gone, in flight or unknown). */
        private RecordKey someLive() {
            List<Info> live = catalog.list(null, null);
            if (live.isEmpty() || random.nextInt(10) == 0) {
                return some();
            }
            return live.get(random.nextInt(live.size())).key();
        }

        private <T> T pick(Set<T> set) {
            List<T> sorted = new ArrayList<>(set);
            sorted.sort((a, b) -> a.toString().compareTo(b.toString())); // hash order would not replay
            return sorted.get(random.nextInt(sorted.size()));
        }

        private SlotList freshSlots(RecordSpec spec) {
            int count = spec.slots(LAYOUT);
            SlotList s = SlotList.of(IntStream.range(nextSlot, nextSlot + count).toArray());
            nextSlot += count;
            return s;
        }

        private static long fileOf(RecordSpec spec) {
            return RecordFileFormat.fileLength(LAYOUT, spec.hasRow());
        }
    }
}
