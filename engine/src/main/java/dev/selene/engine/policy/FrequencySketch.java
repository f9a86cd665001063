package dev.selene.engine.policy;

import dev.selene.engine.key.ChainHash;

/**
 * How often a key was seen lately, kept in a fixed few kilobytes whatever the number of keys: a count-min sketch of
 * four rows of 4-bit counters (at most 15), halved once the sketch has taken {@link #SAMPLE_FACTOR} times its width
 * in increments, so old counts fade. Counts survive the record's eviction, which is the point: a record that comes
 * back is known to have been seen.
 *
 * <p>After Caffeine's {@code FrequencySketch} (the TinyLFU admission filter), simplified: no cache-line blocking.
 */
final class FrequencySketch {

    /** Counters per row. */
    static final int WIDTH = 1 << 16;
    /** Increments, in widths, after which every counter is halved. */
    static final int SAMPLE_FACTOR = 10;

    private static final int ROWS = 4;
    private static final int COUNTERS_PER_LONG = 16;
    private static final long[] SEEDS = {0xC3A5C85C97CB3127L, 0xB492B66FBE98F273L, 0x9AE16A3B2F90404FL,
            0xCBF29CE484222325L};
    private static final long RESET_MASK = 0x7777_7777_7777_7777L;

    private final long[] table = new long[ROWS * WIDTH / COUNTERS_PER_LONG];
    private int additions;

    /** The estimated count of {@code hash}, 0..15. */
    int frequency(long hash) {
        int min = 15;
        for (int row = 0; row < ROWS; row++) {
            min = Math.min(min, counter(row, index(row, hash)));
        }
        return min;
    }

    /** Counts one more sighting of {@code hash}. */
    void increment(long hash) {
        int min = frequency(hash);
        if (min == 15) {
            return;
        }
        for (int row = 0; row < ROWS; row++) {
            int i = index(row, hash);
            if (counter(row, i) == min) {
                table[slot(row, i)] += 1L << shift(i);
            }
        }
        if (++additions >= SAMPLE_FACTOR * WIDTH) {
            for (int k = 0; k < table.length; k++) {
                table[k] = (table[k] >>> 1) & RESET_MASK;
            }
            additions /= 2;
        }
    }

    private static int index(int row, long hash) {
        return (int) ChainHash.mix(hash ^ SEEDS[row]) & (WIDTH - 1);
    }

    private int counter(int row, int i) {
        return (int) ((table[slot(row, i)] >>> shift(i)) & 0xF);
    }

    private static int slot(int row, int i) {
        return row * (WIDTH / COUNTERS_PER_LONG) + i / COUNTERS_PER_LONG;
    }

    private static int shift(int i) {
        return (i % COUNTERS_PER_LONG) * 4;
    }
}
