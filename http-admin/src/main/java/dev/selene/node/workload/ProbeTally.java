package dev.selene.node.workload;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one probe of every conversation found.
 *
 * @param full              conversations restored in full
 * @param partial           conversations restored in part
 * @param recomputed        conversations of which nothing was restored
 * @param verifiedRecords   records restored whose every byte matched
 * @param mismatchedRecords records restored with bytes that differ
 * @param bytes             bytes restored
 * @param fromDisk          records restored from the disk tier
 * @param fromPool          records restored from the pool
 * @param seconds           how long the probe took
 * @param poolBusyNanos     the time during which at least one restore reading from the pool was in flight
 * @param notRestored       how the restores of the recomputed conversations ended, by outcome ({@code miss},
 *                          {@code refused}, {@code failed}, {@code disabled})
 * @param firstDetail       the node's sentence for the first of them that gave one, else empty
 */
public record ProbeTally(long full, long partial, long recomputed, long verifiedRecords, long mismatchedRecords,
                         long bytes, long fromDisk, long fromPool, double seconds, long poolBusyNanos,
                         Map<String, Long> notRestored, String firstDetail) {

    /** Nothing probed yet. */
    public static final ProbeTally NONE = new ProbeTally(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, Map.of(), "");

    public ProbeTally {
        notRestored = Map.copyOf(notRestored);
    }

    /** How the recomputed conversations' restores ended, e.g. {@code miss 1, failed 2}; empty when none. */
    public String notRestoredWords() {
        StringBuilder b = new StringBuilder();
        new java.util.TreeMap<>(notRestored).forEach((k, v) -> b.append(b.isEmpty() ? "" : ", ").append(k)
                .append(' ').append(v));
        return b.toString();
    }

    /** Conversations probed. */
    public long conversations() {
        return full + partial + recomputed;
    }

    /** Whether every restored byte matched. */
    public boolean verified() {
        return mismatchedRecords == 0;
    }

    /** Bytes restored over the probe's time, in GB/s. */
    public double gbps() {
        return seconds > 0 ? bytes / seconds / 1e9 : 0;
    }

    /** The probe's outcome by its JSON names. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("full", full);
        m.put("partial", partial);
        m.put("recomputed", recomputed);
        m.put("not_restored", new java.util.TreeMap<>(notRestored));
        m.put("verified", verified());
        m.put("records_from_disk", fromDisk);
        m.put("records_from_pool", fromPool);
        return m;
    }
}
