package dev.selene.node.cli;

import dev.selene.node.burst.BurstShapeOptions;
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
    BurstShapeOptions shape;

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

    /** Whether {@code --warm} asks the preset to size the warm tier. */
    boolean autoWarm() {
        return warm.equalsIgnoreCase("auto");
    }
}
