package dev.selene.transport.host;

import dev.selene.engine.layout.Layout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The host tier's memory: one off-heap mapping of {@code slotCount} equal slots, shared by every thread.
 *
 * <p>Layout of the mapping (one {@link Arena#ofShared() shared arena}, base aligned to
 * {@link Layout#ALIGNMENT_BYTES}; on Linux an anonymous mapping whose pages the kernel zeroes and faults in up front,
 * so that no copy into a slot stops on a page fault):
 * <pre>
 *   mapping = slot[0] slot[1] ... slot[slotCount - 1]          each slot = ranks × pageBytes bytes
 *   slot    = share[rank 0] share[rank 1] ... share[ranks - 1]  each share = pageBytes bytes
 *
 *   address(slot, rank) = base + slot × slotBytes + rank × pageBytes
 * </pre>
 * Rank r owns the share at {@code r × pageBytes} in every slot, so every share starts on a 4096-byte boundary
 * (page bytes are a multiple of 4096) and can be handed to O_DIRECT or a device copy as it is. A piece of a
 * record (a page or a row piece) occupies one slot; a partly used last row piece uses the start of each share.
 *
 * <p>Address resolution takes no lock: the arithmetic reads only final fields. Closing the mapping while copies
 * still use it makes those copies fail with an {@link IllegalStateException}; it never corrupts memory.
 */
public final class HostMemory implements AutoCloseable {

    private final Layout layout;
    private final int slotCount;
    private final long slotBytes;
    private final Arena arena;
    private final MemorySegment segment;
    private final long base;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** What {@link #close()} runs before unmapping, in the order added. */
    private final List<Runnable> beforeUnmap = new CopyOnWriteArrayList<>();

    private HostMemory(Layout layout, int slotCount, Arena arena, MemorySegment segment) {
        this.layout = layout;
        this.slotCount = slotCount;
        this.slotBytes = layout.slotBytes();
        this.arena = arena;
        this.segment = segment;
        this.base = segment.address();
    }

    /** Maps {@code slotCount} zeroed slots of {@code layout.slotBytes()} bytes each. */
    public static HostMemory allocate(Layout layout, int slotCount) {
        Objects.requireNonNull(layout, "layout");
        if (slotCount < 1) {
            throw new IllegalArgumentException("slotCount = " + slotCount + " is invalid; allowed: at least 1");
        }
        long bytes = Math.multiplyExact(layout.slotBytes(), (long) slotCount);
        Arena arena = Arena.ofShared();
        try {
            return new HostMemory(layout, slotCount, arena, AnonymousMapping.map(arena, bytes, Layout.ALIGNMENT_BYTES));
        } catch (OutOfMemoryError e) {
            arena.close();
            throw new IllegalArgumentException("the slot pool needs " + bytes + " bytes (" + slotCount + " slots of "
                    + layout.slotBytes() + ") that cannot be allocated: this machine's memory (or what the kernel "
                    + "lets a process map) is smaller");
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** The layout whose slots this mapping holds. */
    public Layout layout() {
        return layout;
    }

    /** Number of slots in the mapping. */
    public int slotCount() {
        return slotCount;
    }

    /** The whole mapping. */
    public MemorySegment segment() {
        return segment;
    }

    /** Address of rank {@code rank}'s share of slot {@code slot}; lock-free. */
    public long address(int slot, int rank) {
        checkSlot(slot);
        checkRank(rank);
        return base + slot * slotBytes + (long) rank * layout.pageBytes();
    }

    /** The first {@code bytes} bytes of rank {@code rank}'s share of slot {@code slot}. */
    public MemorySegment share(int slot, int rank, int bytes) {
        checkSlot(slot);
        checkRank(rank);
        if (bytes < 0 || bytes > layout.pageBytes()) {
            throw new IndexOutOfBoundsException(
                    "share of " + bytes + " bytes is outside 0.." + layout.pageBytes() + " (page bytes)");
        }
        return segment.asSlice(slot * slotBytes + (long) rank * layout.pageBytes(), bytes);
    }

    /** Whether {@code [address, address + bytes)} lies inside the mapping. */
    public boolean contains(long address, long bytes) {
        long offset = address - base;
        return bytes >= 0 && offset >= 0 && offset <= segment.byteSize() - bytes;
    }

    /** Whether the mapping is still open. */
    public boolean isOpen() {
        return segment.scope().isAlive();
    }

    /**
     * Has {@link #close()} run {@code action} while the memory is still mapped, just before unmapping it: how a device
     * driver that pinned the mapping unregisters it first (unmapping pinned memory leaves the pages pinned and the
     * range unusable for a later registration). Actions run on the closing thread in the order added; one that
     * throws does not keep the others from running or the memory from being unmapped.
     */
    public void beforeUnmap(Runnable action) {
        Objects.requireNonNull(action, "action");
        if (closed.get()) {
            throw new IllegalStateException(this + " is closed");
        }
        beforeUnmap.add(action);
    }

    /**
     * Runs the {@linkplain #beforeUnmap actions registered to run before unmapping}, then unmaps the memory; later
     * accesses through {@link #segment()} or {@link #share} fail. The first action's exception, if any, is thrown
     * after unmapping.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failure = null;
        for (Runnable action : beforeUnmap) {
            try {
                action.run();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        beforeUnmap.clear();
        arena.close();
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "HostMemory[" + slotCount + " slots of " + slotBytes + " bytes, layout " + layout.name() + "]";
    }

    private void checkSlot(int slot) {
        if (slot < 0 || slot >= slotCount) {
            throw new IndexOutOfBoundsException("slot " + slot + " is outside 0.." + (slotCount - 1));
        }
    }

    private void checkRank(int rank) {
        if (rank < 0 || rank >= layout.ranks()) {
            throw new IndexOutOfBoundsException("rank " + rank + " is outside 0.." + (layout.ranks() - 1));
        }
    }
}
