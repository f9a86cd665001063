package dev.selene.node.workload;

import dev.selene.engine.layout.Layout;

/**
 * The shape of the burst workload: how many conversations, how many at once, how long each is and in how many
 * turns, how long the engine keeps a publication's GPU snapshot, and the seed of their content.
 *
 * @param layout          model layout
 * @param conversations   conversations per run
 * @param concurrency     conversations in flight at once
 * @param tokens          prompt tokens per conversation (rounded down to whole records, at least one)
 * @param turns           turns per conversation; each turn ends at a record with a row
 * @param snapshotMillis  how long the engine keeps a publication's GPU snapshot before giving it up
 * @param seed            seed of the conversations' content
 * @param progress        whether to show progress on standard error
 */
public record WorkloadSettings(Layout layout, int conversations, int concurrency, int tokens, int turns,
                               long snapshotMillis, long seed, boolean progress) {

    public WorkloadSettings {
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

    /** Host slots the whole run occupies if every record stays resident. */
    public long slotsNeeded() {
        long perConversation = 0;
        for (int i = 0; i < recordsPerConversation(); i++) {
            perConversation += layout.slotsPerRecord(hasRow(i));
        }
        return perConversation * conversations;
    }
}
