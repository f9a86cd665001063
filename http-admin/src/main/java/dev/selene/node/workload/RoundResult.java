package dev.selene.node.workload;

import dev.selene.engine.config.ByteSize;

/**
 * What one run of the workload came to on its node, and the verdict line that says what held and what did not.
 *
 * @param publish           the publications' tally
 * @param probe             the probe's
 * @param afterRestart      the probe's after the node restarted on the same disk, or null when it did not
 * @param durableTier       whether the node had a disk or pool tier (only a node without one evicts for good)
 * @param warmBytes         the node's warm tier
 * @param diskFull          writes that found the disk full
 * @param droppedUnwritable records dropped from memory because their durable write failed
 */
public record RoundResult(PublishTally publish, ProbeTally probe, ProbeTally afterRestart, boolean durableTier,
                          long warmBytes, long diskFull, long droppedUnwritable) {

    /** Publications made. */
    public long published() {
        return publish.published();
    }

    /** Whether every restored byte matched, in every probe. */
    public boolean verified() {
        return probe.verified() && (afterRestart == null || afterRestart.verified());
    }

    /** Whether every publication is accounted for and every restored byte matched. */
    public boolean complete() {
        return publish.accountedFor() == publish.published() && verified();
    }

    /**
     * One line that says what held and what did not: publications kept, conversations restored in full, bytes
     * verified, and the disk filling up when it did.
     */
    public String verdict() {
        long published = publish.published();
        long accounted = publish.accountedFor();
        long conversations = probe.conversations();
        StringBuilder b = new StringBuilder("verdict: ");
        boolean held = publish.abandoned().isEmpty() && accounted == published && verified()
                && probe.full() == conversations && diskFull == 0 && droppedUnwritable == 0;
        b.append(held ? "OK: " : "NOT MET: ");
        if (accounted != published) {
            b.append(published - accounted).append(" publications unaccounted for; ");
        }
        b.append(publish.abandoned().isEmpty() ? "every publication kept" : publish.abandonedTotal() + " of "
                + published + " publications abandoned " + publish.abandoned());
        b.append(", ").append(probe.full()).append('/').append(conversations)
                .append(" conversations restored in full");
        if (probe.full() < conversations && !durableTier && warmBytes > 0
                && publish.bytesPublished() > warmBytes) {
            // Memory-only and smaller than the run: the coldest records were evicted, as the node is meant to.
            b.append(" (memory only: the warm tier holds " + ByteSize.format(warmBytes) + " of the "
                    + ByteSize.format(publish.bytesPublished()) + " published, the coldest records were evicted)");
        }
        if (afterRestart != null) {
            b.append(" (").append(afterRestart.full()).append(" after the restart)");
        }
        b.append(verified() ? ", every restored byte verified" : ", RESTORED BYTES DIFFER");
        if (diskFull > 0) {
            b.append(", the disk filled up ").append(diskFull).append(" times");
        }
        if (droppedUnwritable > 0) {
            b.append(", ").append(droppedUnwritable).append(" records dropped from memory because their durable "
                    + "write failed (the disk failed, or the pool refused them)");
        }
        return b.toString();
    }
}
