package dev.selene.engine.index;

import dev.selene.engine.invariants.EngineInvariants;
import dev.selene.engine.invariants.IndexedPool;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.policy.Policies;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random publications, uses, pins, spills, removals and evictions through a slot pool and a resident index
 * driven together, in disk mode and memory-only mode. After every step both cores' invariants hold and they
 * agree on used and clean slots; at the end everything is released. The seed is printed; rerun a failure with
 * {@code -Dselene.seed=N}.
 */
class RecordIndexRandomisedTest {

    private static final int STEPS = 3_000;

    @RegisterExtension
    final EngineInvariants invariants = new EngineInvariants();

    @ParameterizedTest(name = "memoryOnly={0}, policy={1}")
    @CsvSource({"false, lru", "true, lru", "false, reuse", "true, reuse", "false, worth", "true, worth"})
    void randomTierTraffic_keepsPoolAndIndexInAgreementAndLeaksNothing(boolean memoryOnly, String policy) {
        long seed = Long.getLong("selene.seed", System.nanoTime());
        System.out.println("RecordIndexRandomisedTest memoryOnly=" + memoryOnly + " policy=" + policy + " seed="
                + seed);
        Random random = new Random(seed);
        Layout layout = Layout.small();
        SlotAccounting pool = new SlotAccounting(300 + random.nextInt(300), 20);
        RecordIndex index = new RecordIndex(memoryOnly, Policies.create(policy));
        invariants.trackPair(pool, index);
        invariants.expectAllReleased();
        IndexedPool tier = new IndexedPool(layout, pool, index);
        Map<RecordKey, Integer> pins = new HashMap<>();
        List<RecordKey> everSeen = new ArrayList<>();
        long now = 0;

        for (int step = 0; step < STEPS; step++) {
            String at = "seed=" + seed + " step=" + step;
            now += 1 + random.nextInt(5);
            RecordKey some = everSeen.isEmpty() ? null : everSeen.get(random.nextInt(everSeen.size()));
            int op = random.nextInt(12);
            if (op < 4) {
                RecordKey k = new RecordKey("ns", random.nextLong());
                RecordKey parent = some == null || random.nextInt(5) == 0 ? null : some;
                RecordSpec spec = new RecordSpec(k, parent, random.nextInt(3) > 0);
                publish(tier, spec, !memoryOnly && random.nextInt(4) == 0, now, at);
                everSeen.add(k);
            } else if (op < 6 && some != null) {
                index.touch(some, now);
                RecordIndex.Entry e = index.get(some);
                if (e != null) {
                    assertEquals(now, e.lastUseNanos(), at);
                    for (RecordKey up = e.spec().parent(); up != null && index.contains(up);
                         up = index.get(up).spec().parent()) {
                        assertEquals(now, index.get(up).lastUseNanos(), at + ": ancestor " + up + " refreshed");
                    }
                }
            } else if (op < 7 && some != null && index.contains(some)) {
                tier.pin(some);
                pins.merge(some, 1, Integer::sum);
            } else if (op < 8 && !pins.isEmpty()) {
                RecordKey k = pins.keySet().iterator().next();
                tier.unpin(k);
                pins.computeIfPresent(k, (x, n) -> n > 1 ? n - 1 : null);
            } else if (op < 9 && !memoryOnly) {
                for (RecordIndex.Entry e : index.coldestParked(1 + random.nextInt(3))) {
                    assertFalse(e.durable(), at);
                    tier.markDurable(e.key());
                }
            } else if (op < 10 && some != null && !pins.containsKey(some)) {
                tier.remove(some);
            } else if (op < 11) {
                RecordIndex.Entry e = tier.dropColdest();
                if (e != null) {
                    checkDroppable(e, memoryOnly, at);
                }
            }
            pool.checkInvariants();
            index.checkInvariants();
            EngineInvariants.verifyPair(pool, index);
        }

        pins.forEach((k, n) -> {
            for (int i = 0; i < n; i++) {
                tier.unpin(k);
            }
        });
        for (RecordIndex.Entry e = tier.dropColdest(); e != null; e = tier.dropColdest()) {
            checkDroppable(e, memoryOnly, "seed=" + seed + " drain");
        }
        if (memoryOnly) {
            assertEquals(0, index.size(), "seed=" + seed + ": in memory-only mode every record is droppable");
        }
        tier.removeAll();
        assertEquals(pool.total(), pool.free(), "seed=" + seed + ": no slot leaked");
    }

    private static void publish(IndexedPool tier, RecordSpec spec, boolean durable, long now, String at) {
        SlotAccounting pool = tier.pool();
        int slots = spec.slots(Layout.small());
        assertTrue(pool.fits(slots, Purpose.PUBLISH), at);
        tier.evict(pool.evictionWanted(slots));
        if (pool.shortBy(slots, Purpose.PUBLISH) > 0) {
            return; // Retry(no_space): a real node would spill and come back
        }
        RecordIndex.Entry e = tier.publish(spec, durable, now);
        assertNotNull(e, at);
    }

    private static void checkDroppable(RecordIndex.Entry e, boolean memoryOnly, String at) {
        assertEquals(0, e.pins(), at + ": a pinned record was dropped");
        if (memoryOnly) {
            assertEquals(0, e.residentChildren(), at + ": a parent was dropped before its children");
        } else {
            assertTrue(e.durable(), at + ": a parked record was dropped in disk mode");
        }
    }
}
