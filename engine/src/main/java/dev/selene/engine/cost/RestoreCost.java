package dev.selene.engine.cost;

/**
 * The restore decision: restore a prefix from a tier only if that is expected to take no longer than
 * recomputing it on the GPU.
 */
public final class RestoreCost {

    private RestoreCost() {
    }

    /**
     * Whether to refuse a restore: true when its estimated time exceeds the caller's recompute (prefill) estimate.
     * A tie restores, since restoring also spares the GPU the prefill's compute.
     *
     * @param estimateNanos  estimated restore time, e.g. {@link BandwidthEstimator#estimateNanos} of the chain's bytes
     * @param recomputeNanos the caller's estimate of recomputing the same prefix
     */
    public static boolean refuse(long estimateNanos, long recomputeNanos) {
        if (estimateNanos < 0) {
            throw new IllegalArgumentException("estimateNanos = " + estimateNanos + " is invalid; allowed: at least 0");
        }
        if (recomputeNanos < 0) {
            throw new IllegalArgumentException("recomputeNanos = " + recomputeNanos
                    + " is invalid; allowed: at least 0");
        }
        return estimateNanos > recomputeNanos;
    }
}
