package dev.selene.engine.cost;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BandwidthEstimatorTest {

    private static final double GB_PER_S = 1e9;
    private static final long SECOND = 1_000_000_000L;
    private static final long HALF_LIFE = 30 * SECOND;
    private static final long MIB = 1L << 20;
    /** An arbitrary nanoTime origin near the wrap, to show that times compare by subtraction. */
    private static final long T0 = Long.MAX_VALUE - 10 * SECOND;

    private static BandwidthEstimator disk() {
        return new BandwidthEstimator("disk", 1.5 * GB_PER_S, HALF_LIFE);
    }

    /** Nanoseconds that {@code bytes} take at {@code bytesPerSecond}. */
    private static long nanos(long bytes, double bytesPerSecond) {
        return Math.round(bytes / bytesPerSecond * 1e9);
    }

    private static void assertClose(double expected, double actual, double relative, String message) {
        assertEquals(expected, actual, Math.abs(expected) * relative, message);
    }

    @Test
    void beforeAnySample_estimatesThePrior_atAnyTime() {
        BandwidthEstimator e = disk();

        assertAll(
                () -> assertEquals(1.5e9, e.bytesPerSecond(T0), 1e-3),
                () -> assertEquals(1.5e9, e.bytesPerSecond(-T0), 1e-3, "no sample: no clock to go back on"),
                () -> assertEquals(0, e.samples()),
                () -> assertEquals(1.5e9, e.prior()),
                () -> assertEquals("disk", e.tier()));
    }

    @Test
    void sample_repeatedAtOneBandwidth_convergesToIt() {
        BandwidthEstimator e = disk();
        long wave = 64 * MIB;

        long now = T0;
        for (int i = 0; i < 40; i++) {
            now += 100_000_000L;
            e.sample(wave, nanos(wave, 3 * GB_PER_S), now);
        }

        assertClose(3 * GB_PER_S, e.bytesPerSecond(now), 0.01, "40 samples of 3 GB/s, 0.1 s apart");
        assertEquals(40, e.samples());
    }

    @Test
    void sample_movesTheTimePerByteThirtyPercentTowardTheSample() {
        BandwidthEstimator e = new BandwidthEstimator("disk", 1 * GB_PER_S, HALF_LIFE);

        e.sample(1_000_000, 11_000_000, T0); // 11 ns per byte against the prior's 1

        double expectedNanosPerByte = 0.7 * 1 + 0.3 * 11; // 4 ns per byte
        assertClose(1e9 / expectedNanosPerByte, e.bytesPerSecond(T0), 1e-9, "EWMA over time per byte, weight 0.3");
    }

    @Test
    void oneVerySlowSample_lowersTheEstimate_thenItRecoversTowardThePriorWithoutNewSamples() {
        BandwidthEstimator e = disk();
        long wave = 256 * MIB;
        long stalled = 30 * SECOND; // one wave behind a 30 s stall: ~9 MB/s

        e.sample(wave, stalled, T0);

        double justAfter = e.bytesPerSecond(T0);
        double oneHalfLife = e.bytesPerSecond(T0 + HALF_LIFE);
        double fiveMinutes = e.bytesPerSecond(T0 + 10 * HALF_LIFE);
        assertAll(
                () -> assertTrue(justAfter < 0.05 * e.prior(), "the stall dominates at first: " + justAfter),
                () -> assertTrue(oneHalfLife > justAfter, "it recovers as time passes: " + oneHalfLife),
                () -> assertTrue(fiveMinutes > 0.9 * e.prior(), "ten half-lives later it is back near the prior: "
                        + fiveMinutes),
                () -> assertEquals(1, e.samples(), "no new sample was needed"));
    }

    @Test
    void oneVerySlowSample_refusesARestoreAtFirst_butNotOnceTheEstimateHasDecayed() {
        BandwidthEstimator e = disk();
        long chain = 128 * MIB;                      // ~89 ms at the 1.5 GB/s prior
        long recompute = 250_000_000L;               // prefill estimate: 250 ms
        e.sample(256 * MIB, 30 * SECOND, T0);

        assertTrue(RestoreCost.refuse(e.estimateNanos(chain, T0), recompute), "right after the stall");
        assertFalse(RestoreCost.refuse(e.estimateNanos(chain, T0 + 10 * HALF_LIFE), recompute),
                "five minutes later, with no sample in between");
    }

    @Test
    void decay_halvesTheGapInTimePerByteEveryHalfLife() {
        BandwidthEstimator e = new BandwidthEstimator("disk", 1 * GB_PER_S, HALF_LIFE);
        e.sample(1_000_000, 11_000_000, T0); // estimate 4 ns per byte: 3 above the prior

        assertClose(1e9 / (1 + 1.5), e.bytesPerSecond(T0 + HALF_LIFE), 1e-9, "one half-life: gap 1.5");
        assertClose(1e9 / (1 + 0.75), e.bytesPerSecond(T0 + 2 * HALF_LIFE), 1e-9, "two half-lives: gap 0.75");
    }

    @Test
    void decay_appliesTowardAFasterSampleToo() {
        BandwidthEstimator e = new BandwidthEstimator("disk", 1 * GB_PER_S, HALF_LIFE);
        for (int i = 0; i < 30; i++) {
            e.sample(1_000_000, 250_000, T0); // 4 GB/s
        }

        double fresh = e.bytesPerSecond(T0);
        double later = e.bytesPerSecond(T0 + 20 * HALF_LIFE);
        assertAll(
                () -> assertClose(4 * GB_PER_S, fresh, 0.01, "learnt"),
                () -> assertClose(1 * GB_PER_S, later, 0.001, "forgotten without samples: back to the prior"));
    }

    @Test
    void sample_afterALongQuietSpell_startsFromTheDecayedEstimate_notTheStaleOne() {
        BandwidthEstimator e = new BandwidthEstimator("disk", 1 * GB_PER_S, HALF_LIFE);
        e.sample(1_000_000, 100_000_000, T0); // 100 ns per byte: estimate 30.7

        long later = T0 + 40 * HALF_LIFE;    // decayed to the prior, 1 ns per byte
        e.sample(1_000_000, 1_000_000, later);

        assertClose(1 * GB_PER_S, e.bytesPerSecond(later), 1e-6, "0.7 × 1 + 0.3 × 1 ns per byte");
    }

    @Test
    void estimateNanos_isBytesOverTheBandwidth_roundedUp() {
        BandwidthEstimator e = new BandwidthEstimator("disk", 2 * GB_PER_S, HALF_LIFE);
        e.sample(1_000_000, 1_000_000, T0); // 0.7 × 0.5 + 0.3 × 1 = 0.65 ns per byte

        long now = T0 + 7 * SECOND;
        double bandwidth = e.bytesPerSecond(now);
        assertAll(
                () -> assertEquals(0, e.estimateNanos(0, now)),
                () -> assertEquals(1, e.estimateNanos(1, now), "a byte takes under a nanosecond: rounds up to 1"),
                () -> assertEquals(Math.ceil(8 * MIB / bandwidth * 1e9), e.estimateNanos(8 * MIB, now), 1.0),
                () -> assertEquals(2 * e.estimateNanos(MIB, now), e.estimateNanos(2 * MIB, now), 1.0,
                        "linear in bytes"),
                () -> assertEquals(Math.ceil(GB_PER_S * 0.5), e.estimateNanos(1_000_000_000L, T0 + 1000 * HALF_LIFE),
                        1.0, "fully decayed: the 2 GB/s prior"));
    }

    @Test
    void estimateNanos_saturatesInsteadOfOverflowing() {
        BandwidthEstimator e = new BandwidthEstimator("disk", 1, HALF_LIFE); // 1 byte per second

        assertEquals(Long.MAX_VALUE, e.estimateNanos(Long.MAX_VALUE, T0));
    }

    @Test
    void constructor_rejectsInvalidArguments_naming_theArgumentAndTheAllowedValues() {
        assertAll(
                () -> assertThrows(NullPointerException.class, () -> new BandwidthEstimator(null, 1e9, HALF_LIFE)),
                () -> assertMessage(() -> new BandwidthEstimator(" ", 1e9, HALF_LIFE), "tier is blank"),
                () -> assertMessage(() -> new BandwidthEstimator("disk", 0, HALF_LIFE),
                        "priorBytesPerSecond = 0.0 for tier 'disk' is invalid; allowed: a finite number above 0"),
                () -> assertMessage(() -> new BandwidthEstimator("disk", -1, HALF_LIFE), "priorBytesPerSecond = -1.0"),
                () -> assertMessage(() -> new BandwidthEstimator("disk", Double.NaN, HALF_LIFE),
                        "priorBytesPerSecond = NaN"),
                () -> assertMessage(() -> new BandwidthEstimator("disk", Double.POSITIVE_INFINITY, HALF_LIFE),
                        "priorBytesPerSecond = Infinity"),
                () -> assertMessage(() -> new BandwidthEstimator("disk", 1e9, 0),
                        "halfLifeNanos = 0 for tier 'disk' is invalid; allowed: at least 1"));
    }

    @Test
    void sample_rejectsInvalidArguments_andKeepsItsState() {
        BandwidthEstimator e = disk();
        e.sample(MIB, 1_000_000, T0);
        double before = e.bytesPerSecond(T0);

        assertAll(
                () -> assertMessage(() -> e.sample(0, 1, T0), "bytes = 0 in a sample for tier 'disk' is invalid"),
                () -> assertMessage(() -> e.sample(-5, 1, T0), "bytes = -5"),
                () -> assertMessage(() -> e.sample(MIB, 0, T0), "transferNanos = 0 in a sample for tier 'disk'"),
                () -> assertMessage(() -> e.sample(MIB, 1_000, T0 - 1), "times must not go backwards"));
        assertEquals(before, e.bytesPerSecond(T0));
        assertEquals(1, e.samples());
    }

    @Test
    void queries_rejectATimeBeforeTheLastSample() {
        BandwidthEstimator e = disk();
        e.sample(MIB, 1_000_000, T0);

        assertAll(
                () -> assertMessage(() -> e.bytesPerSecond(T0 - SECOND), "1000000000 ns before the last sample"),
                () -> assertMessage(() -> e.estimateNanos(MIB, T0 - 1), "times must not go backwards"),
                () -> assertMessage(() -> e.estimateNanos(-1, T0), "bytes = -1 to estimate for tier 'disk'"));
    }

    @Test
    void times_mayWrapAroundLikeNanoTime() {
        BandwidthEstimator e = new BandwidthEstimator("disk", 1 * GB_PER_S, HALF_LIFE);
        e.sample(1_000_000, 11_000_000, T0);

        long wrapped = T0 + HALF_LIFE; // past Long.MAX_VALUE: negative

        assertTrue(wrapped < 0);
        assertClose(1e9 / 2.5, e.bytesPerSecond(wrapped), 1e-9, "one half-life later, across the wrap");
    }

    private static void assertMessage(Runnable call, String expectedPart) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
        assertTrue(e.getMessage().contains(expectedPart), () -> "message '" + e.getMessage() + "' lacks '"
                + expectedPart + "'");
    }
}
