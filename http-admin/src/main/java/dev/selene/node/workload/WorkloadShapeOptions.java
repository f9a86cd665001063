package dev.selene.node.workload;

import picocli.CommandLine.Option;

/**
 * The command-line options of the burst workload's conversations, shared by every command that runs it
 * ({@code burst}, {@code soak}, {@code serve --workload}): prompt tokens, turns and how long a GPU snapshot lives.
 */
public final class WorkloadShapeOptions {

    @Option(names = "--tokens", paramLabel = "N", defaultValue = "3072",
            description = "Prompt tokens per conversation (default: ${DEFAULT-VALUE}).")
    int tokens;

    @Option(names = "--turns", paramLabel = "N", defaultValue = "2",
            description = "Turns per conversation (default: ${DEFAULT-VALUE}).")
    int turns;

    @Option(names = "--snapshot-ms", paramLabel = "MS", defaultValue = "2000",
            description = "How long the engine keeps a publication's GPU snapshot (default: ${DEFAULT-VALUE}).")
    long snapshotMillis;

    public int tokens() {
        return tokens;
    }

    public int turns() {
        return turns;
    }

    public long snapshotMillis() {
        return snapshotMillis;
    }
}
