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

    /** The slots of pieces {@code from} (inclusive) to {@code to} (exclusive), in order. */
    public SlotList slice(int from, int to) {
        return new SlotList(Arrays.copyOfRange(slots, from, to));
    }

    /** The slots of {@code first} followed by those of {@code second}. */
    public static SlotList concat(SlotList first, SlotList second) {
        int[] out = Arrays.copyOf(first.slots, first.slots.length + second.slots.length);
        System.arraycopy(second.slots, 0, out, first.slots.length, second.slots.length);
        return new SlotList(out);
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
