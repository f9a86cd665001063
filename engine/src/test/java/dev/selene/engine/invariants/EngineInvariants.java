package dev.selene.engine.invariants;

import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.slots.SlotAccounting;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;

/**
 * A JUnit 5 extension that checks the engine cores' invariants after every test: the slot pools and record
 * indexes a test registers with {@link #track} are checked with their own {@code checkInvariants()}, a pool and
 * an index registered as a pair must agree (the pool's clean count is the index's droppable total, its used
 * slots are the index's resident slots), and a test that says it released everything must have leaked nothing.
 *
 * <p>Register it in a test class as an instance field:
 * <pre>{@code
 * @RegisterExtension final EngineInvariants invariants = new EngineInvariants();
 * }</pre>
 * JUnit makes a new test instance, and so a new extension, for every test; nothing leaks between tests.
 */
public final class EngineInvariants implements AfterEachCallback {

    private final List<SlotAccounting> pools = new ArrayList<>();
    private final List<RecordIndex> indexes = new ArrayList<>();
    private final List<Pair> pairs = new ArrayList<>();
    private boolean expectAllReleased;

    private record Pair(SlotAccounting pool, RecordIndex index) {
    }

    /** Checks {@code pool}'s invariants after the test; returns it for chaining. */
    public SlotAccounting track(SlotAccounting pool) {
        pools.add(pool);
        return pool;
    }

    /** Checks {@code index}'s invariants after the test; returns it for chaining. */
    public RecordIndex track(RecordIndex index) {
        indexes.add(index);
        return index;
    }

    /**
     * Checks both, and that they agree: every resident record's slots are in use in the pool (and nothing else
     * is), and the pool counts exactly the droppable records' slots as clean.
     */
    public void trackPair(SlotAccounting pool, RecordIndex index) {
        track(pool);
        track(index);
        pairs.add(new Pair(pool, index));
    }

    /** Declares that the test releases every slot and removes every record: a leftover is a leak. */
    public void expectAllReleased() {
        expectAllReleased = true;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        verify();
    }

    /** Runs every check now; an {@link AssertionError} names the first one that fails. */
    public void verify() {
        for (SlotAccounting pool : pools) {
            check("slot pool", pool::checkInvariants);
        }
        for (RecordIndex index : indexes) {
            check("record index", index::checkInvariants);
        }
        for (Pair p : pairs) {
            verifyPair(p.pool(), p.index());
        }
        if (expectAllReleased) {
            for (SlotAccounting pool : pools) {
                if (pool.free() != pool.total() || pool.clean() != 0) {
                    throw new AssertionError("slot leak: " + pool.free() + " of " + pool.total() + " slots free, "
                            + pool.clean() + " still counted clean, after the test released everything");
                }
            }
            for (RecordIndex index : indexes) {
                if (index.size() != 0 || index.residentSlots() != 0 || index.droppableSlots() != 0
                        || index.parkedSlots() != 0) {
                    throw new AssertionError("record leak: " + index.size() + " records (" + index.residentSlots()
                            + " slots) still resident after the test removed everything");
                }
            }
        }
    }

    /** Checks now that {@code pool} and {@code index} agree on used and clean slots. */
    public static void verifyPair(SlotAccounting pool, RecordIndex index) {
        if (pool.inUse() != index.residentSlots()) {
            throw new AssertionError("pool has " + pool.inUse() + " slots in use, index holds "
                    + index.residentSlots() + " resident slots");
        }
        if (pool.clean() != index.droppableSlots()) {
            throw new AssertionError("pool counts " + pool.clean() + " clean slots, index has "
                    + index.droppableSlots() + " droppable slots");
        }
    }

    private static void check(String what, Runnable invariants) {
        try {
            invariants.run();
        } catch (IllegalStateException e) {
            throw new AssertionError(what + " invariant broken after the test: " + e.getMessage(), e);
        }
    }
}
