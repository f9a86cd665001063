package dev.selene.node.burst;

import dev.selene.engine.layout.Layout;

import java.nio.file.Path;

/**
 * The knobs of one burst run: the workload's shape, the GPU snapshot budget and the node under test.
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
        if (conversations < 1) {
            throw new IllegalArgumentException("--conversations must be at least 1, was " + conversations);
        }
        if (concurrency < 1) {
            throw new IllegalArgumentException("--concurrency must be at least 1, was " + concurrency);
        }
        if (tokens < 1) {
            throw new IllegalArgumentException("--tokens must be at least 1, was " + tokens);
        }
        if (turns < 1) {
            throw new IllegalArgumentException("--turns must be at least 1, was " + turns);
        }
        if (snapshotMillis < 1) {
            throw new IllegalArgumentException("--snapshot-ms must be at least 1, was " + snapshotMillis);
        }
        if (copyThreads < 1 || copyThreads > 64) {
            throw new IllegalArgumentException("--copy-threads must be in 1..64, was " + copyThreads);
        }
        if (poolManagers < 0) {
            throw new IllegalArgumentException("pool managers must be 0 or more, was " + poolManagers);
        }
    }

    /** Records per conversation: whole records of prompt tokens, at least one. */
    public int recordsPerConversation() {
        return Math.max(1, tokens / layout.tokensPerRecord());
    }

    /** Whether record {@code i} of a conversation carries a row: the last record of each turn does. */
    public boolean hasRow(int i) {
        int n = recordsPerConversation();
        int turnsHere = Math.min(turns, n);
        for (int t = 1; t <= turnsHere; t++) {
            if (i == (int) ((long) n * t / turnsHere) - 1) {
                return true;
            }
        }
        return false;
    }

    /** These settings with a warm tier of {@code bytes}. */
    public BurstSettings withWarmBytes(long bytes) {
        return new BurstSettings(layout, conversations, concurrency, tokens, turns, bytes, snapshotMillis, device,
                copyThreads, bandwidthCap, seed, progress, restart, diskDir, poolManagers);
    }

    /** Host slots the whole burst occupies if every record stays resident. */
    public long slotsNeeded() {
        long perConversation = 0;
        for (int i = 0; i < recordsPerConversation(); i++) {
            perConversation += layout.slotsPerRecord(hasRow(i));
        }
        return perConversation * conversations;
    }
}
