package dev.selene.engine.cost;

import java.util.Objects;

/**
 * How fast one tier moves a restore's bytes, learnt from timed transfers: an estimate of the time one byte
 * takes, pulled toward each new sample and, between samples, back toward a prior.
 *
 * <p>Confined to the actor that owns it (the tier that times its restores); not thread-safe. Times are
 * {@link System#nanoTime()} readings, compared by subtraction, so they may wrap.
 *
 * <pre>
 * State: d = nanos per byte at the last sample (t0); p = 1e9 / priorBytesPerSecond
 *
 *   estimate at t:   e(t) = p + (d - p) × 2^(-(t - t0) / halfLife)            (d = p before any sample)
 *   sample at t:     d ← (1 - W) × e(t) + W × transferNanos / bytes;  t0 ← t  (W = SAMPLE_WEIGHT = 0.3)
 *   bytesPerSecond:  1e9 / e(t);     estimateNanos(b): ceil(b × e(t))
 * </pre>
 */
public final class BandwidthEstimator {

    /*
     * Design
     *
     * Domain. The average runs over time per byte, not bytes per second: the decision it feeds (restore cost) compares
     * times, and the mean of times is the expected time of the next restore. Averaging rates instead would let
     * one fast sample hide a slow disk (the mean of rates overstates the harmonic mean that times imply).
     *
     * Weight. W = 0.3 forgets a sample's influence to under 3% after ten further samples [1]: quick enough to
     * follow a disk that has changed speed, slow enough that one odd wave moves the estimate by at most 30% of
     * its own deviation.
     *
     * Recovery. A slow sample (a stalled write sharing the device, a 30 s EIO retry) raises the time per byte
     * enough that every restore would be refused; refused restores take no samples, so an average alone would
     * never recover. Between samples the gap to the prior therefore halves every half-life [2]: after ten
     * half-lives any gap is under 0.1% of what it was, whatever caused it, and no sample is needed for that.
     * A sample folds in the decayed estimate, so a stale slow estimate is not resurrected by the next sample.
     *
     * Limits. A wave's fixed latency (open, the first I/O) counts as bandwidth, so small waves read slower than
     * large ones; restores read whole chains in waves of several records, which keeps that share small.
     *
     * [1] (1 - W)^10 = 0.028.
     * [2] As Finagle's peak-EWMA load balancer decays its latency estimate with the time since the last
     *     observation, rather than with the number of observations.
     */

    /** Weight of the newest sample in the moving average; the estimate before it keeps {@code 1 - weight}. */
    public static final double SAMPLE_WEIGHT = 0.3;
    /** A half-life that suits restores from a local disk: a stall's effect falls to 1/16 within two minutes. */
    public static final long DEFAULT_HALF_LIFE_NANOS = 30_000_000_000L;

    private static final double NANOS_PER_SECOND = 1e9;

    private final String tier;
    private final double prior;
    private final double priorNanosPerByte;
    private final long halfLifeNanos;
    private double nanosPerByte;
    private long lastSampleNanos;
    private long samples;

    /**
     * An estimator that starts at, and decays toward, {@code priorBytesPerSecond}.
     *
     * @param tier                the tier it measures (a metric label, e.g. {@code disk})
     * @param priorBytesPerSecond the bandwidth assumed before any sample and returned to between samples
     * @param halfLifeNanos       how long it takes the gap between estimate and prior to halve without samples
     */
    public BandwidthEstimator(String tier, double priorBytesPerSecond, long halfLifeNanos) {
        Objects.requireNonNull(tier, "tier");
        if (tier.isBlank()) {
            throw new IllegalArgumentException("tier is blank; name the tier the estimator measures, e.g. 'disk'");
        }
        if (!(priorBytesPerSecond > 0) || Double.isInfinite(priorBytesPerSecond)) {
            throw new IllegalArgumentException("priorBytesPerSecond = " + priorBytesPerSecond + " for tier '" + tier
                    + "' is invalid; allowed: a finite number above 0");
        }
        if (halfLifeNanos <= 0) {
            throw new IllegalArgumentException("halfLifeNanos = " + halfLifeNanos + " for tier '" + tier
                    + "' is invalid; allowed: at least 1");
        }
        this.tier = tier;
        this.prior = priorBytesPerSecond;
        this.priorNanosPerByte = NANOS_PER_SECOND / priorBytesPerSecond;
        this.halfLifeNanos = halfLifeNanos;
        this.nanosPerByte = priorNanosPerByte;
    }

    /**
     * Adds one timed transfer: a wave of parallel reads timed from its first start to its last completion.
     *
     * @param bytes         bytes the wave moved (at least 1)
     * @param transferNanos how long it took (at least 1)
     * @param nowNanos      when it completed; not before the previous sample
     */
    public void sample(long bytes, long transferNanos, long nowNanos) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes = " + bytes + " in a sample for tier '" + tier
                    + "' is invalid; allowed: at least 1 (a wave that moved nothing tells nothing)");
        }
        if (transferNanos <= 0) {
            throw new IllegalArgumentException("transferNanos = " + transferNanos + " in a sample for tier '" + tier
                    + "' is invalid; allowed: at least 1");
        }
        double current = nanosPerByte(nowNanos);
        nanosPerByte = (1 - SAMPLE_WEIGHT) * current + SAMPLE_WEIGHT * ((double) transferNanos / bytes);
        lastSampleNanos = nowNanos;
        samples++;
    }

    /** The estimated bandwidth at {@code nowNanos}, in bytes per second. */
    public double bytesPerSecond(long nowNanos) {
        return NANOS_PER_SECOND / nanosPerByte(nowNanos);
    }

    /** The estimated time to move {@code bytes} at {@code nowNanos}, rounded up; saturates at Long.MAX_VALUE. */
    public long estimateNanos(long bytes, long nowNanos) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes = " + bytes + " to estimate for tier '" + tier
                    + "' is invalid; allowed: at least 0");
        }
        double nanos = Math.ceil(bytes * nanosPerByte(nowNanos));
        return nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) nanos;
    }

    /** Samples taken so far. */
    public long samples() {
        return samples;
    }

    /** The prior bandwidth, in bytes per second. */
    public double prior() {
        return prior;
    }

    /** The tier this estimator measures. */
    public String tier() {
        return tier;
    }

    @Override
    public String toString() {
        return "BandwidthEstimator[" + tier + ", prior " + prior + " B/s, half-life " + halfLifeNanos + " ns, "
                + samples + " samples]";
    }

    private double nanosPerByte(long nowNanos) {
        if (samples == 0) {
            return priorNanosPerByte;
        }
        long elapsed = nowNanos - lastSampleNanos;
        if (elapsed < 0) {
            throw new IllegalArgumentException("nowNanos = " + nowNanos + " for tier '" + tier + "' is "
                    + (-elapsed) + " ns before the last sample (" + lastSampleNanos
                    + "); times must not go backwards (use System.nanoTime())");
        }
        double remaining = Math.pow(0.5, (double) elapsed / halfLifeNanos);
        return priorNanosPerByte + (nanosPerByte - priorNanosPerByte) * remaining;
    }
}
