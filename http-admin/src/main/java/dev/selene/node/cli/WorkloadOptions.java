package dev.selene.node.cli;

import picocli.CommandLine.Option;

/** The burst workload's shape, shared by {@code burst} and {@code soak}: layout, conversations' size, device. */
final class WorkloadOptions {

    @Option(names = "--layout", defaultValue = "deepseek-tp4",
            description = "Layout preset: deepseek-tp4, qwen-tp1, small (default: ${DEFAULT-VALUE}).")
    String layout;

    @Option(names = "--concurrency", defaultValue = "32", description = "Conversations at once (default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--tokens", defaultValue = "3072", description = "Prompt tokens per conversation (default: ${DEFAULT-VALUE}).")
    int tokens;

    @Option(names = "--turns", defaultValue = "2", description = "Turns per conversation (default: ${DEFAULT-VALUE}).")
    int turns;

    @Option(names = "--warm", defaultValue = "auto",
            description = "Warm tier size, e.g. 512m or 3g; 'auto' sizes it for the preset (default: ${DEFAULT-VALUE}).")
    String warm;

    @Option(names = "--snapshot-ms", defaultValue = "2000",
            description = "How long the engine keeps a publication's GPU snapshot (default: ${DEFAULT-VALUE}).")
    long snapshotMillis;

    @Option(names = "--device", defaultValue = "auto", description = "auto, simulated or cuda (default: ${DEFAULT-VALUE}).")
    String device;

    /** The device, refused with one line when it is not one of the three. */
    String device() {
        if (!device.equals("auto") && !device.equals("simulated") && !device.equals("cuda")) {
            throw new IllegalArgumentException("--device '" + device + "' is unknown; allowed: auto, simulated, cuda");
        }
        return device;
    }

    /** Whether {@code --warm} asks the preset to size the warm tier. */
    boolean autoWarm() {
        return warm.equalsIgnoreCase("auto");
    }
}
