package dev.selene.engine.slots;

import java.util.Arrays;

/**
 * The slots one record holds, in record order: its pages first, then its row pieces. A handle, not memory:
 * actors pass it around instead of bytes. Immutable.
 */
public final class SlotList {

    private final int[] slots;

    private SlotList(int[] slots) {
        this.slots = slots;
    }

    /** A list over a copy of {@code slots}. */
    public static SlotList of(int... slots) {
        return new SlotList(slots.clone());
    }

    static SlotList wrap(int[] slots) {
        return new SlotList(slots);
    }

    /** Number of slots. */
    public int count() {
        return slots.length;
    }

    /** The slot holding piece {@code piece} of the record. */
    public int slot(int piece) {
        return slots[piece];
    }

    /** A copy of the slot numbers. */
    public int[] toArray() {
        return slots.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SlotList other && Arrays.equals(slots, other.slots);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(slots);
    }

    @Override
    public String toString() {
        return slots.length <= 8 ? Arrays.toString(slots) : slots.length + " slots from " + slots[0];
    }
}
