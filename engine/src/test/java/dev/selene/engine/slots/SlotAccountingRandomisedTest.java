package dev.selene.engine.slots;

import dev.selene.engine.invariants.EngineInvariants;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random allocate, release and clean changes against a model of who holds which slots. The seed is printed;
 * rerun a failure with {@code -Dselene.seed=N}, then turn it into a plain regression test.
 */
class SlotAccountingRandomisedTest {

    private static final int STEPS = 4_000;

    @RegisterExtension
    final EngineInvariants invariants = new EngineInvariants();

    /** One record's slots in the model, and whether they are counted clean. */
    private static final class Held {
        final SlotList slots;
        boolean clean;

        Held(SlotList slots) {
            this.slots = slots;
        }
    }

    @RepeatedTest(5)
    void randomAllocateReleaseAndClean_keepsInvariantsAndLeaksNoSlot() {
        long seed = Long.getLong("selene.seed", System.nanoTime());
        System.out.println("SlotAccountingRandomisedTest seed=" + seed);
        Random random = new Random(seed);
        int total = 64 + random.nextInt(900);
        int intake = random.nextInt(total / 4 + 1);
        SlotAccounting pool = invariants.track(new SlotAccounting(total, intake));
        invariants.expectAllReleased();
        List<Held> held = new ArrayList<>();

        for (int step = 0; step < STEPS; step++) {
            String at = "seed=" + seed + " step=" + step;
            int op = random.nextInt(10);
            if (op < 4) {
                allocate(pool, held, random, at);
            } else if (op < 7 && !held.isEmpty()) {
                release(pool, held.remove(random.nextInt(held.size())));
            } else if (op < 9 && !held.isEmpty()) {
                Held h = held.get(random.nextInt(held.size()));
                if (h.clean) {
                    pool.removeClean(h.slots.count());
                } else {
                    pool.addClean(h.slots.count());
                }
                h.clean = !h.clean;
            } else if (!held.isEmpty()) {
                Held h = held.get(random.nextInt(held.size()));
                assertThrows(IllegalStateException.class, () -> pool.release(h.slots.count() == 0
                        ? SlotList.of(-1) : SlotList.of(h.slots.slot(0), h.slots.slot(0), -1)), at);
            }
            pool.checkInvariants();
            checkModel(pool, held, at);
        }

        while (!held.isEmpty()) {
            release(pool, held.removeLast());
            pool.checkInvariants();
        }
        assertEquals(total, pool.free(), "seed=" + seed + ": every slot is free again");
        assertEquals(0, pool.clean(), "seed=" + seed);
    }

    private static void allocate(SlotAccounting pool, List<Held> held, Random random, String at) {
        int slots = 1 + random.nextInt(40);
        Purpose purpose = random.nextBoolean() ? Purpose.PUBLISH : Purpose.STAGING;
        int wanted = pool.evictionWanted(slots);
        assertTrue(wanted >= 0 && wanted <= pool.clean(), at);
        int shortBy = pool.shortBy(slots, purpose);
        if (shortBy == 0) {
            int before = pool.free();
            held.add(new Held(pool.allocate(slots)));
            assertEquals(before - slots, pool.free(), at);
            if (purpose == Purpose.STAGING) {
                assertTrue(pool.free() >= pool.intake() / 2, at + ": staging never eats more than half the intake");
            }
        } else if (slots > pool.free()) {
            assertThrows(IllegalStateException.class, () -> pool.allocate(slots), at);
        } else {
            assertEquals(Purpose.STAGING, purpose, at + ": only staging is short while slots are free");
        }
    }

    private static void release(SlotAccounting pool, Held h) {
        if (h.clean) {
            pool.removeClean(h.slots.count());
        }
        pool.release(h.slots);
    }

    private static void checkModel(SlotAccounting pool, List<Held> held, String at) {
        BitSet seen = new BitSet(pool.total());
        int used = 0;
        int clean = 0;
        for (Held h : held) {
            for (int i = 0; i < h.slots.count(); i++) {
                int s = h.slots.slot(i);
                assertFalse(seen.get(s), at + ": slot " + s + " is held twice");
                seen.set(s);
            }
            used += h.slots.count();
            clean += h.clean ? h.slots.count() : 0;
        }
        assertEquals(used, pool.inUse(), at);
        assertEquals(pool.total() - used, pool.free(), at);
        assertEquals(clean, pool.clean(), at);
        assertEquals(Math.max(0, 2 * pool.intake() - (pool.free() + pool.clean())), pool.pressureDeficit(), at);
    }
}
