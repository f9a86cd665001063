package dev.selene.node.cli;

import dev.selene.engine.config.ByteSize;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.intake.IntakeSizing;
import dev.selene.node.config.MachineMemory;
import dev.selene.node.workload.WorkloadShapeOptions;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The burst workload's node and shape, shared by {@code burst} and {@code soak}: layout, warm size, concurrency,
 * device, and the conversations' shape ({@code serve --workload} takes the node's own settings and the shape alone).
 */
final class WorkloadOptions {

    @Option(names = "--layout", defaultValue = "deepseek-tp4",
            description = "Layout preset: deepseek-tp4, qwen-tp1, small (default: ${DEFAULT-VALUE}).")
    String layout;

    @Option(names = "--concurrency", defaultValue = "32", description = "Conversations at once (default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Mixin
    WorkloadShapeOptions shape;

    @Option(names = "--warm", defaultValue = "auto",
            description = "Warm tier size, e.g. 512m or 3g; 'auto' sizes it for the preset (default: ${DEFAULT-VALUE}).")
    String warm;

    @Option(names = "--device", defaultValue = "auto", description = "auto, simulated or cuda (default: ${DEFAULT-VALUE}).")
    String device;

    /** The device, refused with one line when it is not one of the three. */
    String device() {
        if (!device.equals("auto") && !device.equals("simulated") && !device.equals("cuda")) {
            throw new IllegalArgumentException("--device '" + device + "' is unknown; allowed: auto, simulated, cuda");
        }
        return device;
    }

    /**
     * Refuses, with one line naming {@code --warm}, a node whose warm tier and smallest intake do not fit its host
     * budget, or whose host slots do not fit this machine's memory; then, with one line naming the options that size
     * the burst, one whose snapshots ({@code snapshotBytes}: every record written into the simulated device before
     * the publications start) do not fit this machine's memory beside the node's slots.
     */
    void checkFits(CacheConfig config, long snapshotBytes) {
        checkFits(config);
        String unfit = MachineMemory.snapshotsProblem(config, device, snapshotBytes);
        if (unfit != null) {
            throw new IllegalArgumentException(unfit);
        }
    }

    /**
     * Refuses, with one line naming {@code --warm}, a node whose warm tier and smallest intake do not fit its host
     * budget, or whose host slots do not fit this machine's memory.
     */
    void checkFits(CacheConfig config) {
        String unfit = IntakeSizing.budgetProblem(config.layout(), config.effectiveWindowSlots(), config.warmBytes(),
                config.hostBudgetBytes(), null);
        if (unfit == null) {
            unfit = MachineMemory.problem(config);
        }
        if (unfit != null) {
            throw new IllegalArgumentException("--warm = '" + warm + "'" + (autoWarm() ? " ("
                    + ByteSize.format(config.warmBytes()) + ")" : "") + " is invalid: " + unfit + (autoWarm()
                    ? " (the automatic size holds the whole burst: fewer or shorter conversations, --conversations, "
                    + "--tokens, --turns, or a --warm of its own)" : ""));
        }
    }

    /** Whether {@code --warm} asks the preset to size the warm tier. */
    boolean autoWarm() {
        return warm.equalsIgnoreCase("auto");
    }
}
