package dev.selene.engine.cost;

/**
 * What a restore saves: recomputing a prefix costs prefill time on the GPU, restoring it costs the copy of its
 * bytes from the tier it is in. The same comparison decides whether a node restores at all; here it also
 * totals what a replay's hits saved.
 *
 * @param prefillTokensPerSecond how fast the engine recomputes a prompt (an assumption about the model and GPU)
 * @param memoryBytesPerSecond   host memory to device copies
 * @param diskBytesPerSecond     disk reads, e.g. a node's read estimate ({@link BandwidthEstimator})
 */
public record PrefillCost(double prefillTokensPerSecond, double memoryBytesPerSecond, double diskBytesPerSecond) {

    /** A prefill rate for a mid-sized model on one current GPU. */
    public static final double DEFAULT_PREFILL_TOKENS_PER_SECOND = 10_000;
    /** Pinned host to device copies over PCIe 4.0 x16. */
    public static final double DEFAULT_MEMORY_BYTES_PER_SECOND = 20e9;
    /** A node's prior for disk reads before it has timed one. */
    public static final double DEFAULT_DISK_BYTES_PER_SECOND = 1e9;

    public PrefillCost {
        for (double v : new double[] {prefillTokensPerSecond, memoryBytesPerSecond, diskBytesPerSecond}) {
            if (!(v > 0) || Double.isInfinite(v)) {
                throw new IllegalArgumentException("a prefill rate or bandwidth of " + v + " is invalid; allowed: a "
                        + "finite number above 0");
            }
        }
    }

    /** The defaults with another prefill rate. */
    public static PrefillCost withPrefill(double tokensPerSecond) {
        return new PrefillCost(tokensPerSecond, DEFAULT_MEMORY_BYTES_PER_SECOND, DEFAULT_DISK_BYTES_PER_SECOND);
    }

    /** The same costs with another disk bandwidth. */
    public PrefillCost withDisk(double bytesPerSecond) {
        return new PrefillCost(prefillTokensPerSecond, memoryBytesPerSecond, bytesPerSecond);
    }

    /** Seconds of prefill for {@code tokens}. */
    public double recomputeSeconds(long tokens) {
        return tokens / prefillTokensPerSecond;
    }

    /** Seconds to copy {@code memoryBytes} from memory and {@code diskBytes} from disk to the device. */
    public double restoreSeconds(long memoryBytes, long diskBytes) {
        return memoryBytes / memoryBytesPerSecond + diskBytes / diskBytesPerSecond;
    }

    /** Seconds saved by restoring {@code tokens} from those bytes rather than recomputing them. */
    public double savedSeconds(long tokens, long memoryBytes, long diskBytes) {
        return recomputeSeconds(tokens) - restoreSeconds(memoryBytes, diskBytes);
    }
}
