package dev.selene.node.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.layout.Layout;
import dev.selene.node.burst.BurstReport;
import dev.selene.node.burst.BurstRun;
import dev.selene.node.burst.BurstSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code selene burst}: the production burst scenario against an embedded node (DESIGN §9). */
@Command(name = "burst", mixinStandardHelpOptions = true,
        description = "Replay the production burst: conversations publish under a bounded GPU snapshot budget, "
                + "then a probe restores every conversation and verifies every byte.")
final class BurstCommand implements Callable<Integer> {

    /** Slack added to the warm tier that the memory-only preset sizes to hold the whole burst. */
    static final double AUTO_WARM_SLACK = 1.10;

    @Option(names = "--preset", defaultValue = "memory-only",
            description = "Deployment shape: memory-only (default).")
    String preset;

    @Option(names = "--layout", defaultValue = "deepseek-tp4",
            description = "Layout preset: deepseek-tp4, qwen-tp1, small (default: ${DEFAULT-VALUE}).")
    String layout;

    @Option(names = "--conversations", defaultValue = "128", description = "Conversations per run (default: ${DEFAULT-VALUE}).")
    int conversations;

    @Option(names = "--concurrency", defaultValue = "32", description = "Conversations at once (default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--tokens", defaultValue = "3072", description = "Prompt tokens per conversation (default: ${DEFAULT-VALUE}).")
    int tokens;

    @Option(names = "--turns", defaultValue = "2", description = "Turns per conversation (default: ${DEFAULT-VALUE}).")
    int turns;

    @Option(names = "--warm", defaultValue = "auto",
            description = "Warm tier size, e.g. 512m or 3g; 'auto' holds the whole burst (default: ${DEFAULT-VALUE}).")
    String warm;

    @Option(names = "--snapshot-ms", defaultValue = "2000",
            description = "How long the engine keeps a publication's GPU snapshot (default: ${DEFAULT-VALUE}).")
    long snapshotMillis;

    @Option(names = "--device", defaultValue = "auto", description = "auto, simulated or cuda (default: ${DEFAULT-VALUE}).")
    String device;

    @Option(names = "--copy-threads", defaultValue = "1",
            description = "Simulated device: copy-engine threads per direction (default: ${DEFAULT-VALUE}).")
    int copyThreads;

    @Option(names = "--bandwidth-cap", defaultValue = "0",
            description = "Simulated device: copy bandwidth cap per direction, bytes/s, e.g. 2g (default: none).")
    String bandwidthCap;

    @Option(names = "--seed", defaultValue = "42", description = "Content seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--no-warmup", description = "Skip the small untimed warm-up burst that runs first.")
    boolean noWarmup;

    @Option(names = "--json", description = "Print the report as one JSON object on the last line of standard output.")
    boolean json;

    @Option(names = "--no-progress", description = "Do not show progress on standard error.")
    boolean noProgress;

    @Override
    public Integer call() throws Exception {
        String p = preset.toLowerCase(Locale.ROOT);
        if (!p.equals("memory-only")) {
            throw new IllegalArgumentException("--preset '" + preset + "' is unknown; allowed: memory-only");
        }
        if (!device.equals("auto") && !device.equals("simulated") && !device.equals("cuda")) {
            throw new IllegalArgumentException("--device '" + device + "' is unknown; allowed: auto, simulated, cuda");
        }
        Layout l = Layout.preset(layout);
        BurstSettings probe = new BurstSettings(l, conversations, concurrency, tokens, turns, 0, snapshotMillis,
                device, copyThreads, 0, seed, false);
        long warmBytes = warm.equalsIgnoreCase("auto")
                ? (long) Math.ceil(probe.slotsNeeded() * AUTO_WARM_SLACK) * l.slotBytes()
                : ByteSize.parse("--warm", warm);
        long cap = ByteSize.parse("--bandwidth-cap", bandwidthCap);
        BurstSettings settings = new BurstSettings(l, conversations, concurrency, tokens, turns, warmBytes,
                snapshotMillis, device, copyThreads, cap, seed, !noProgress);
        System.err.printf(Locale.ROOT, "selene burst: %s, %d conversations of %d records (%d at once), warm %s%n",
                l.name(), conversations, settings.recordsPerConversation(), concurrency, ByteSize.format(warmBytes));
        BurstReport report = new BurstRun(settings, System.err).run(!noWarmup);
        System.out.print(report.table());
        if (json) {
            System.out.println(new ObjectMapper().writeValueAsString(report.toMap()));
        }
        return report.complete() ? 0 : 1;
    }
}
