package dev.selene.node.workload;

import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.value.PublishResult;

import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the publications of one run came to: how each ended, the retries, the bytes stored, the latency and how long
 * the run's publication took.
 *
 * @param published      publications made
 * @param stored         answered {@code Stored}
 * @param present        answered {@code Present}
 * @param oversize       answered {@code Oversize}
 * @param failed         answered {@code Failed}
 * @param disabled       answered {@code Disabled}
 * @param abandoned      publications given up, by reason (in the order of the reasons)
 * @param retries        publications sent again after a {@code Retry} answer
 * @param bytesPublished bytes of the records stored
 * @param p50Nanos       median publication latency
 * @param p99Nanos       99th percentile of the publication latency
 * @param elapsedNanos   from the first publication to the last answer
 */
public record PublishTally(long published, long stored, long present, long oversize, long failed, long disabled,
                           Map<String, Long> abandoned, long retries, long bytesPublished, long p50Nanos,
                           long p99Nanos, long elapsedNanos) {

    /** Nothing published yet. */
    public static final PublishTally NONE = new PublishTally(0, 0, 0, 0, 0, 0, Map.of(), 0, 0, 0, 0, 0);

    public PublishTally {
        abandoned = Collections.unmodifiableSortedMap(new TreeMap<>(abandoned));
    }

    /** The tally of {@code outcomes}, every publication of a run that took {@code elapsedNanos}. */
    static PublishTally of(Collection<PublishOutcome> outcomes, long elapsedNanos) {
        long[] latencies = new long[outcomes.size()];
        long published = 0;
        long stored = 0;
        long present = 0;
        long oversize = 0;
        long failed = 0;
        long disabled = 0;
        long retries = 0;
        long bytes = 0;
        Map<String, Long> abandoned = new TreeMap<>();
        int k = 0;
        for (PublishOutcome o : outcomes) {
            latencies[k++] = o.latencyNanos();
            published++;
            retries += o.attempts() - 1;
            if (o.abandoned()) {
                abandoned.merge(o.abandonReason(), 1L, Long::sum);
                continue;
            }
            switch (o.result()) {
                case PublishResult.Stored s -> {
                    stored++;
                    bytes += s.bytes();
                }
                case PublishResult.Present p -> present++;
                case PublishResult.Oversize o2 -> oversize++;
                case PublishResult.Failed f -> failed++;
                case PublishResult.Disabled d -> disabled++;
                case PublishResult.Retry r -> throw new IllegalStateException("retry outcome not abandoned: " + r);
                case PublishResult.Abandoned a ->
                        throw new IllegalStateException("abandoned outcome not counted: " + a);
            }
        }
        Arrays.sort(latencies);
        return new PublishTally(published, stored, present, oversize, failed, disabled, abandoned, retries, bytes,
                percentile(latencies, 0.50), percentile(latencies, 0.99), elapsedNanos);
    }

    /** Publications given up, whatever the reason. */
    public long abandonedTotal() {
        return abandoned.values().stream().mapToLong(l -> l).sum();
    }

    /** Publications that ended with an answer or as abandoned; equal to {@code published} when nothing is lost. */
    public long accountedFor() {
        return stored + present + oversize + failed + disabled + abandonedTotal();
    }

    /** How long the publications took, in seconds. */
    public double seconds() {
        return elapsedNanos / 1e9;
    }

    /** Bytes stored over the time the publications took, in GB/s. */
    public double gbps() {
        return elapsedNanos > 0 ? bytesPublished / (double) elapsedNanos : 0;
    }

    private static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int i = (int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1);
        return sorted[Math.max(0, i)];
    }
}
