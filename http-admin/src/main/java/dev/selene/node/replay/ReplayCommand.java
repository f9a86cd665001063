package dev.selene.node.replay;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.SeleneCache;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DeviceCopiers;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code selene replay TRACE}: a Mooncake-format trace through an embedded memory-only node. */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = "Replay a Mooncake-format trace (one JSON request per line; hash_ids are 512-token prefix "
                + "blocks) and report the hit ratio, restores by tier, recomputes and the unbounded ceiling.")
public final class ReplayCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "TRACE", description = "The trace file, e.g. ../shared/traces/synthetic_trace.jsonl.")
    Path trace;

    @Option(names = "--speedup", paramLabel = "X", defaultValue = "0",
            description = "Arrivals at timestamp / X; 0 = as fast as possible (default: ${DEFAULT-VALUE}).")
    double speedup;

    @Option(names = "--layout", defaultValue = "qwen-tp1",
            description = "Layout preset with 512-token records: qwen-tp1, deepseek-tp4 (default: ${DEFAULT-VALUE}).")
    String layout;

    @Option(names = "--warm", defaultValue = "4g", description = "Warm tier size (default: ${DEFAULT-VALUE}).")
    String warm;

    @Option(names = "--concurrency", defaultValue = "8",
            description = "Active requests the node sizes its intake for (default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--device", defaultValue = "simulated",
            description = "auto, simulated or cuda (default: ${DEFAULT-VALUE}).")
    String device;

    @Option(names = "--row-interval", paramLabel = "N", defaultValue = "0",
            description = "Also publish a row every N blocks (an engine that checkpoints its state there); "
                    + "0 = a row only at each request's last block (default: ${DEFAULT-VALUE}).")
    int rowInterval;

    @Option(names = "--limit", defaultValue = "0", description = "Replay only the first N requests; 0 = all.")
    int limit;

    @Option(names = "--json", description = "Print the report as one JSON object on the last line of standard output.")
    boolean json;

    @Option(names = "--no-progress", description = "Do not show progress on standard error.")
    boolean noProgress;

    @Override
    public Integer call() throws Exception {
        if (speedup < 0 || Double.isNaN(speedup)) {
            throw new IllegalArgumentException("--speedup " + speedup + " is invalid; allowed: 0 (as fast as possible) "
                    + "or a positive factor");
        }
        if (!DeviceCopiers.KINDS.contains(device)) {
            throw new IllegalArgumentException("--device '" + device + "' is unknown; allowed: auto, simulated, cuda");
        }
        Layout l = Layout.preset(layout);
        long warmBytes = ByteSize.parse("--warm", warm);
        List<TraceRequest> requests = MooncakeTrace.read(trace, limit);
        CacheConfig config = CacheConfig.memoryOnly(l, warmBytes).withConcurrency(concurrency).withDevice(device);
        System.err.printf(Locale.ROOT, "selene replay: %d requests from %s, %s, warm %s%n", requests.size(), trace,
                l.name(), ByteSize.format(warmBytes));
        ReplayReport report;
        try (DeviceCopier copier = DeviceCopiers.select(device); SeleneCache cache = SeleneCache.start(config, copier,
                CacheSettings.standaloneSystemConfig(), "selene")) {
            report = new TraceReplay(cache, copier, speedup, rowInterval, noProgress ? null : System.err).run(requests);
        }
        System.out.print(report.table());
        if (json) {
            System.out.println(new ObjectMapper().writeValueAsString(report.toMap()));
        }
        return 0;
    }
}
