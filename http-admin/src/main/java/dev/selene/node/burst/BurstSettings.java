package dev.selene.node.burst;

import dev.selene.engine.layout.Layout;
import dev.selene.node.workload.WorkloadSettings;

import java.nio.file.Path;

/**
 * The knobs of one burst run: the workload's shape (its {@link #workload()}), the device and the node under test.
 *
 * @param layout          model layout
 * @param conversations   conversations per run
 * @param concurrency     conversations in flight at once
 * @param tokens          prompt tokens per conversation (rounded down to whole records, at least one)
 * @param turns           turns per conversation; each turn ends at a record with a row
 * @param warmBytes       warm-tier size of the node
 * @param snapshotMillis  how long the engine keeps a publication's GPU snapshot before giving it up
 * @param device          device kind: auto, simulated or cuda
 * @param copyThreads     copy-engine threads per direction of the simulated device
 * @param bandwidthCap    bytes/s cap of the simulated device's copies (0: none)
 * @param seed            seed of the conversations' content
 * @param progress        whether to show progress on standard error
 * @param restart         whether to stop the node after the probe, start a new one on the same disk and probe again
 * @param diskDir         the node's disk tier directory, or null (used for the raw O_DIRECT baseline)
 * @param poolManagers    pool managers the node retires to (0: no pool); with a pool the burst is followed by a
 *                        drain that retires what is still dirty, and the raw data-plane baseline is measured
 *                        against the managers
 */
public record BurstSettings(Layout layout, int conversations, int concurrency, int tokens, int turns, long warmBytes,
                            long snapshotMillis, String device, int copyThreads, long bandwidthCap, long seed,
                            boolean progress, boolean restart, Path diskDir, int poolManagers) {

    /** Settings of a node without a pool. */
    public BurstSettings(Layout layout, int conversations, int concurrency, int tokens, int turns, long warmBytes,
                         long snapshotMillis, String device, int copyThreads, long bandwidthCap, long seed,
                         boolean progress, boolean restart, Path diskDir) {
        this(layout, conversations, concurrency, tokens, turns, warmBytes, snapshotMillis, device, copyThreads,
                bandwidthCap, seed, progress, restart, diskDir, 0);
    }

    public BurstSettings {
        new WorkloadSettings(layout, conversations, concurrency, tokens, turns, snapshotMillis, seed, progress);
        if (copyThreads < 1 || copyThreads > 64) {
            throw new IllegalArgumentException("--copy-threads must be in 1..64, was " + copyThreads);
        }
        if (poolManagers < 0) {
            throw new IllegalArgumentException("pool managers must be 0 or more, was " + poolManagers);
        }
    }

    /** The workload's shape: what the run publishes and probes. */
    public WorkloadSettings workload() {
        return new WorkloadSettings(layout, conversations, concurrency, tokens, turns, snapshotMillis, seed, progress);
    }

    /** Records per conversation: whole records of prompt tokens, at least one. */
    public int recordsPerConversation() {
        return workload().recordsPerConversation();
    }

    /** These settings with a warm tier of {@code bytes}. */
    public BurstSettings withWarmBytes(long bytes) {
        return new BurstSettings(layout, conversations, concurrency, tokens, turns, bytes, snapshotMillis, device,
                copyThreads, bandwidthCap, seed, progress, restart, diskDir, poolManagers);
    }

    /** Host slots the whole burst occupies if every record stays resident. */
    public long slotsNeeded() {
        return workload().slotsNeeded();
    }
}
