package dev.selene.node.replay;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.CacheStatus;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.cost.PrefillCost;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.policy.Policies;
import dev.selene.engine.simulator.PolicyComparison;
import dev.selene.engine.simulator.ReplaySimulator;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceCeiling;
import dev.selene.engine.trace.TraceRequest;
import dev.selene.engine.trace.TraceShapes;
import dev.selene.node.Failures;
import dev.selene.node.OwnDirectory;
import dev.selene.node.config.MachineMemory;
import dev.selene.node.logging.ConsoleLogging;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DeviceCopiers;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;

/**
 * {@code selene replay TRACE}: a Mooncake-format trace (or a generated one) through an embedded node, memory-only
 * or memory and disk, or through the simulator of its cores (which models the disk tier too); every report also
 * gives the farthest-next-use oracle's hit ratio at the same memory and disk sizes.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = "Replay a Mooncake-format trace (one JSON request per line; hash_ids are 512-token prefix "
                + "blocks) and report the hit ratio by tier, the prefill time it saved, restores, the oracle's hit "
                + "ratio at the same memory and disk sizes and the unbounded ceilings.")
public final class ReplayCommand implements Callable<Integer> {

    /** The simulator and a memory-only node disagree by more than this: a warning. */
    static final double SIMULATOR_TOLERANCE = 0.005;

    /**
     * The simulator and a node with a disk tier disagree by more than this: a warning. The node's writes run while
     * it goes on, the simulator's finish before its next step, so which records are clean when memory needs room can
     * differ.
     */
    static final double DISK_SIMULATOR_TOLERANCE = 0.02;

    /** The disk tier's size when --disk-size is not given. */
    static final String DEFAULT_DISK_SIZE = "16g";

    @Parameters(index = "0", arity = "0..1", paramLabel = "TRACE",
            description = "The trace file, e.g. traces/synthetic_trace.jsonl; omit it with --generate.")
    Path trace;

    @Option(names = "--generate", paramLabel = "SHAPE",
            description = "Replay a generated trace instead: system-prompts, short-chats, agent-loops, "
                    + "shared-prompt-chat.")
    String generate;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of --generate (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--requests", defaultValue = "4000",
            description = "Requests of --generate (default: ${DEFAULT-VALUE}).")
    int generatedRequests;

    @Option(names = "--save", paramLabel = "FILE", description = "With --generate: also write the generated trace "
            + "to FILE.")
    Path save;

    @Option(names = "--policy", defaultValue = Policies.DEFAULT,
            description = "Eviction policy: lru, reuse, worth, or oracle (farthest next use, a reference only the "
                    + "simulator can run) (default: ${DEFAULT-VALUE}).")
    String policy;

    @Option(names = "--simulate",
            description = "Run the simulator of the node's cores (no actors: seconds for a whole trace); with "
                    + "--disk-size it models a disk tier of that size (nothing is written).")
    boolean simulate;

    @Option(names = "--rows", defaultValue = "last-full",
            description = "Where the engine checkpoints: last-full (each request's last full block), last (its last "
                    + "block, partial ones included), every (every block) (default: ${DEFAULT-VALUE}).")
    String rows;

    @Option(names = "--row-interval", paramLabel = "N", defaultValue = "0",
            description = "Also a row every N blocks; 0 = none (default: ${DEFAULT-VALUE}).")
    int rowInterval;

    @Option(names = "--speedup", paramLabel = "X", defaultValue = "0",
            description = "Arrivals at timestamp / X; 0 = as fast as possible (default: ${DEFAULT-VALUE}).")
    double speedup;

    @Option(names = "--layout", defaultValue = "qwen-tp1",
            description = "Layout preset with 512-token records: qwen-tp1, deepseek-tp4 (default: ${DEFAULT-VALUE}).")
    String layout;

    @Option(names = "--warm", defaultValue = "4g", description = "Warm tier size (default: ${DEFAULT-VALUE}).")
    String warm;

    @Option(names = "--disk-dir", paramLabel = "DIR",
            description = "Add a disk tier: a fresh directory in DIR (an existing writable directory), deleted after "
                    + "the replay, also when it is interrupted.")
    Path diskDir;

    @Option(names = "--disk-size",
            description = "Disk tier size: with --disk-dir the node's (default: 16g); with --simulate, --policy oracle "
                    + "or --compare the simulated disk tier's (none when not given).")
    String diskSize;

    @Option(names = "--settle-writes",
            description = "With --disk-dir: after each request wait until the node's disk writes have finished, as "
                    + "the simulator assumes (a check of the simulator, not how an engine runs).")
    boolean settleWrites;

    @Option(names = "--prefill-tokens-per-s", paramLabel = "N", defaultValue = "10000",
            description = "The engine's prefill rate in tokens per second (above 0), for the time saved and the "
                    + "node's restore decisions (default: ${DEFAULT-VALUE}).")
    double prefillTokensPerSecond;

    @Option(names = "--concurrency", defaultValue = "8",
            description = "Active requests the node sizes its intake for (default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--device", defaultValue = "simulated",
            description = "auto, simulated or cuda (default: ${DEFAULT-VALUE}).")
    String device;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "0",
            description = "Replay only the first N requests; 0 = all (default: ${DEFAULT-VALUE}).")
    int limit;

    @Option(names = "--compare",
            description = "Run every policy and the oracle through the simulator on TRACE (when given), every "
                    + "generated shape and families of generated chat traces, under both layouts at two memory sizes "
                    + "each, and print one table; traces the policies were tuned on are marked. --seed and --requests "
                    + "shape the generated traces.")
    boolean compare;

    @Option(names = "--seeds", paramLabel = "FIRST-LAST",
            description = "With --compare: generate the traces once for every seed from FIRST to LAST (instead of "
                    + "--seed) and sum up every policy over all their rows, listing the rows where the default "
                    + "policy breaks a rule (more than a point below lru; held out, under 0.7 of the oracle where "
                    + "it beats lru by more than 5 points) instead of printing the table.")
    String seeds;

    @Option(names = "--json", description = "Print the report as one JSON object on the last line of standard output.")
    boolean json;

    @Option(names = "--no-progress", description = "Do not show progress on standard error.")
    boolean noProgress;

    @Spec
    CommandSpec spec;

    /** Whether {@code option} was given on the command line (not left at its default). */
    private boolean given(String option) {
        return spec != null && spec.commandLine().getParseResult().hasMatchedOption(option);
    }

    @Override
    public Integer call() throws Exception {
        if (seeds != null && !compare) {
            throw new IllegalArgumentException("--seeds runs --compare over many seeds; give --compare with it");
        }
        validateCommon();
        // An option that does not apply to what the command line asks is refused, not ignored.
        for (String o : List.of("--seed", "--requests")) {
            if (given(o) && generate == null && !compare) {
                throw new IllegalArgumentException(o + " sizes a generated trace; give --generate SHAPE or --compare "
                        + "with it");
            }
        }
        if (compare && given("--policy")) {
            throw new IllegalArgumentException("--policy does not apply to --compare, which runs every policy");
        }
        if (compare) {
            return compare();
        }
        // The terminal shows the report and warnings; the node's start-up lines are not the replay's outcome.
        try (ConsoleLogging quiet = ConsoleLogging.quiet(false)) {
            return replay();
        }
    }

    private int replay() throws Exception {
        // Everything the command line names is checked before the first line is printed: an error is all it prints.
        validate();
        Layout l = Layout.preset(layout);
        long warmBytes = ByteSize.parseWarm("--warm", warm, l.slotBytes());
        RowRule rule = RowRule.parse(rows, rowInterval);
        boolean oracle = ReplaySimulator.ORACLE.equals(policy);
        boolean simulated = simulate || oracle;
        CacheConfig memory = CacheConfig.memoryOnly(l, warmBytes).withConcurrency(concurrency).withDevice(device);
        CacheConfig config = memory.withPolicy(oracle ? Policies.DEFAULT : policy);
        if (!simulated) {
            String unfit;
            try {
                unfit = MachineMemory.problem(config);
            } catch (IllegalArgumentException e) {
                unfit = e.getMessage(); // more slots than a node counts
            }
            if (unfit != null) {
                throw new IllegalArgumentException("--warm = '" + warm + "' is invalid: " + unfit);
            }
        }
        long diskBytes = diskDir != null || diskSize != null
                ? ByteSize.parse("--disk-size", diskSize == null ? DEFAULT_DISK_SIZE : diskSize) : 0;
        long record = (long) l.slotsPerRecord(true) * l.slotBytes();
        if (diskSize != null && diskBytes < record) {
            // 0 would quietly replay without the disk tier asked for
            throw new IllegalArgumentException("--disk-size '" + diskSize + "' is invalid; allowed: at least one "
                    + "record of the layout (" + ByteSize.format(record) + "), e.g. 16g");
        }
        CacheConfig modelled = diskBytes > 0 ? memory.withDisk("simulated", diskBytes) : memory;
        PrefillCost cost = PrefillCost.withPrefill(prefillTokensPerSecond);
        List<TraceRequest> requests = requests();
        ReplayReport report = new ReplayReport();
        report.policy = policy;
        report.rows = rule;
        report.layout = l.name();
        report.warmBytes = warmBytes;
        report.diskBytes = diskBytes;
        report.speedup = speedup;
        ReplaySimulator simulator = new ReplaySimulator(modelled, rule, cost);
        String heading = String.format(Locale.ROOT, "selene replay: %d requests from %s, %s, warm %s%s, policy %s, "
                        + "rows %s, %s%n", requests.size(), source(), l.name(), ByteSize.format(warmBytes),
                diskBytes == 0 ? "" : ", disk " + ByteSize.format(diskBytes), policy, rule.label(),
                simulated ? "simulator" : "node");
        if (simulated) {
            System.err.print(heading);
            report.ceiling = TraceCeiling.of(requests, rule);
            report.engine = ReplayReport.Engine.SIMULATOR;
            report.cost = cost;
            long start = System.nanoTime();
            report.fill(simulator.run(requests, policy));
            report.seconds = (System.nanoTime() - start) / 1e9;
        } else {
            report.engine = ReplayReport.Engine.NODE;
            Path diskRun = diskDir == null ? null : runDirectory();
            // Ended from outside (Ctrl-C), the process skips the finally below: the hook deletes the directory then.
            Thread cleanup = diskRun == null ? null : new Thread(() -> OwnDirectory.deleteWhileStopping(diskRun,
                    this::nodeStopped), "replay-disk-cleanup");
            try {
                if (diskRun != null) {
                    Runtime.getRuntime().addShutdownHook(cleanup);
                    config = config.withDisk(diskRun.toString(), diskBytes);
                }
                runNode(config, requests, rule, cost, heading, report);
            } finally {
                if (diskRun != null) {
                    OwnDirectory.delete(diskRun);
                    try {
                        Runtime.getRuntime().removeShutdownHook(cleanup);
                    } catch (IllegalStateException e) {
                        // the process is ending: the hook runs and finds nothing left
                    }
                }
            }
            if (report.diskShrank()) {
                // the comparisons model the disk the node had, not the one asked for
                simulator = new ReplaySimulator(memory.withDisk("simulated", report.diskRanBytes), rule, cost);
            }
            report.simulated = simulator.run(requests, policy);
            double tolerance = diskBytes > 0 ? DISK_SIMULATOR_TOLERANCE : SIMULATOR_TOLERANCE;
            if (Math.abs(report.simulated.hitRatio() - report.hitRatio()) > tolerance) {
                System.err.printf(Locale.ROOT, "selene replay: the simulator's hit ratio %.4f differs from the "
                        + "node's %.4f under policy %s%n", report.simulated.hitRatio(), report.hitRatio(), policy);
            }
        }
        report.oracle = oracle ? null : simulator.run(requests, ReplaySimulator.ORACLE);
        if (diskBytes > 0) {
            report.memoryOnlyOracle = new ReplaySimulator(memory, rule, cost).run(requests, ReplaySimulator.ORACLE);
        }
        System.out.print(report.table());
        System.out.println(report.verdict());
        if (json) {
            System.out.println(new ObjectMapper().writeValueAsString(report.toMap()));
        }
        return 0;
    }

    /** The node replaying the trace, once started; null before. */
    private volatile SeleneCache running;

    /** When the node replaying the trace has stopped; null when none was started. */
    private CompletionStage<?> nodeStopped() {
        SeleneCache node = running;
        return node == null ? null : node.system().getWhenTerminated();
    }

    /** Replays {@code requests} through a node of {@code config}; prints {@code heading} once the node runs. */
    private void runNode(CacheConfig config, List<TraceRequest> requests, RowRule rule, PrefillCost cost,
                         String heading, ReplayReport report) throws Exception {
        PrintStream progress = noProgress ? null : System.err;
        try (DeviceCopier copier = DeviceCopiers.select(device); SeleneCache cache = SeleneCache.start(config,
                copier, CacheSettings.standaloneSystemConfig(), "selene")) {
            running = cache;
            System.err.print(heading);
            report.ceiling = TraceCeiling.of(requests, rule);
            report.cost = cost;
            new TraceReplay(cache, copier, speedup, rule, cost, progress).settleWrites(settleWrites)
                    .run(requests, report);
            CacheStatus status = cache.status().toCompletableFuture().join();
            report.rowsAdded = status.counters().getOrDefault("rows.added", 0L);
            report.rowsDropped = status.counters().getOrDefault("rows.dropped", 0L);
            report.rowsHeldBack = status.counters().getOrDefault("rows.held-back", 0L);
            if (status.disk() != null && status.disk().readSamples() > 0) {
                report.cost = cost.withDisk(status.disk().readBytesPerSecond());
            }
            if (status.disk() != null) {
                report.spilled = status.counters().getOrDefault("spill.written", 0L);
                report.evictedFromDisk = status.counters().getOrDefault("evicted.disk", 0L);
                report.diskRanBytes = status.disk().capacityBytes();
                report.diskFull = status.counters().getOrDefault("disk.full", 0L);
            }
        }
    }

    private int compare() throws IOException {
        if (generate != null || diskDir != null) {
            throw new IllegalArgumentException("--compare runs the simulator on TRACE and its own generated traces; "
                    + "--generate and --disk-dir do not apply (--disk-size gives every row a simulated disk tier)");
        }
        long[] range = seeds == null ? null : seedRange(seeds);
        long diskBytes = diskSize == null ? 0 : ByteSize.parse("--disk-size", diskSize);
        RowRule rule = RowRule.parse(rows, rowInterval);
        String name = trace == null ? null : trace.getFileName().toString().replaceFirst("\\.jsonl?$", "");
        List<TraceRequest> file = trace == null ? null : MooncakeTrace.read(trace, limit);
        List<PolicyComparison.Trace> traces = range == null
                ? PolicyComparison.traces(name, file, seed, generatedRequests)
                : PolicyComparison.traces(name, file, range[0], range[1], generatedRequests);
        System.err.printf(Locale.ROOT, "selene replay: comparing %s and the oracle (and %s, where a generated trace "
                        + "has one-off requests) on %d traces, rows %s, %s, simulator%n", String.join(", ",
                        Policies.NAMES), ReplaySimulator.KINDS_KNOWN, traces.size(), rule.label(),
                diskBytes == 0 ? "memory only" : "disk " + ByteSize.format(diskBytes));
        PolicyComparison comparison = new PolicyComparison(rule, concurrency, diskBytes);
        List<PolicyComparison.Row> table = comparison.run(traces, Policies.NAMES, row -> {
            if (!noProgress) {
                System.err.printf(Locale.ROOT, "  %s, %s, %s: %s%n", row.trace(), row.layout(),
                        ByteSize.format(row.warmBytes()), row.hitRatio());
            }
        });
        if (range == null) {
            System.out.print(PolicyComparison.table(table, Policies.NAMES));
            System.out.println();
            System.out.print(PolicyComparison.summary(table, Policies.NAMES));
        } else {
            System.out.printf(Locale.ROOT, "seeds %d-%d: %d rows%n", range[0], range[1], table.size());
            System.out.print(PolicyComparison.means(table, Policies.NAMES));
            System.out.print(PolicyComparison.summary(table, Policies.NAMES));
            List<String> broken = PolicyComparison.breaches(table, Policies.DEFAULT);
            System.out.printf(Locale.ROOT, "%s breaks a rule on %d rows%s%n", Policies.DEFAULT, broken.size(),
                    broken.isEmpty() ? "" : ":");
            broken.forEach(line -> System.out.println("  " + line));
        }
        if (json) {
            List<Map<String, Object>> json = table.stream().map(r -> Map.<String, Object>of("trace", r.trace(),
                    "tuned_on", r.tuned(), "layout", r.layout(), "warm_bytes", r.warmBytes(),
                    "disk_bytes", r.diskBytes(), "ceiling_unbounded_rows", r.ceiling(), "hit_ratio",
                    r.hitRatio())).toList();
            System.out.println(new ObjectMapper().writeValueAsString(Map.of("rows", rule.placement().label(),
                    "default_policy", Policies.DEFAULT, "table", json)));
        }
        return 0;
    }

    /** The seeds of {@code --seeds FIRST-LAST} (or one seed, {@code --seeds N}), or one line saying what is wrong. */
    static long[] seedRange(String text) {
        String[] parts = text.trim().split("-", -1);
        try {
            long first = Long.parseLong(parts[0].trim());
            long last = parts.length == 2 ? Long.parseLong(parts[1].trim()) : first;
            if (parts.length <= 2 && first >= 0 && last >= first && last - first < MAX_SEEDS) {
                return new long[] {first, last};
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException("--seeds '" + text + "' is invalid; allowed: FIRST-LAST (0 <= FIRST <= "
                + "LAST, at most " + MAX_SEEDS + " seeds) or one seed N");
    }

    /** The most seeds one {@code --seeds} runs (each takes seconds). */
    static final int MAX_SEEDS = 1000;

    /** The most requests a node sizes its intake for. */
    static final int MAX_CONCURRENCY = 65536;

    /** Checks the options a replay and a comparison share, each refused with one line naming it. */
    private void validateCommon() {
        if (limit < 0) {
            throw new IllegalArgumentException("--limit " + limit + " is invalid; allowed: 0 (all requests) or a "
                    + "positive number of requests");
        }
        if (generatedRequests < 1) {
            throw new IllegalArgumentException("--requests " + generatedRequests + " is invalid; allowed: a positive "
                    + "number of requests");
        }
        if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
            throw new IllegalArgumentException("--concurrency " + concurrency + " is invalid; allowed: 1.."
                    + MAX_CONCURRENCY);
        }
        if (save != null && generate == null) {
            throw new IllegalArgumentException("--save writes a generated trace; give --generate SHAPE with it");
        }
    }

    private void validate() {
        if (speedup < 0 || Double.isNaN(speedup)) {
            throw new IllegalArgumentException("--speedup " + number(speedup) + " is invalid; allowed: 0 (as fast as "
                    + "possible) or a positive factor");
        }
        if (!(prefillTokensPerSecond > 0) || Double.isInfinite(prefillTokensPerSecond)) {
            throw new IllegalArgumentException("--prefill-tokens-per-s " + number(prefillTokensPerSecond)
                    + " is invalid; allowed: a positive, finite number of tokens per second");
        }
        if (!DeviceCopiers.KINDS.contains(device)) {
            throw new IllegalArgumentException("--device '" + device + "' is unknown; allowed: auto, simulated, cuda");
        }
        if (!Policies.NAMES.contains(policy) && !ReplaySimulator.ORACLE.equals(policy)) {
            throw new IllegalArgumentException("--policy '" + policy + "' is unknown; allowed: "
                    + String.join(", ", Policies.NAMES) + ", " + ReplaySimulator.ORACLE);
        }
        List<String> layouts = Layout.PRESETS.stream()
                .filter(name -> Layout.preset(name).tokensPerRecord() == TraceRequest.BLOCK_TOKENS).toList();
        String named = layout.toLowerCase(java.util.Locale.ROOT); // as serve and burst take it, in any case
        if (!layouts.contains(named)) {
            String why = Layout.PRESETS.contains(named) ? " is invalid: its records cover "
                    + Layout.preset(named).tokensPerRecord() + " tokens, a trace's blocks " + TraceRequest.BLOCK_TOKENS
                    : " is unknown";
            throw new IllegalArgumentException("--layout '" + layout + "'" + why + "; allowed: "
                    + String.join(", ", layouts));
        }
        if ((trace == null) == (generate == null)) {
            throw new IllegalArgumentException("give a TRACE file or --generate SHAPE (one of them)");
        }
        boolean simulated = simulate || ReplaySimulator.ORACLE.equals(policy);
        if (simulated) {
            for (String o : List.of("--speedup", "--device", "--disk-dir")) {
                if (given(o)) {
                    throw new IllegalArgumentException(o + " applies to a node; the simulator (--simulate, or "
                            + "--policy oracle) runs none" + (o.equals("--disk-dir")
                            ? " (--disk-size gives it a simulated disk tier)" : ""));
                }
            }
        }
        if (diskSize != null && diskDir == null && !simulated) {
            throw new IllegalArgumentException("--disk-size needs --disk-dir (the node's disk tier) or --simulate "
                    + "(a simulated one)");
        }
        if (settleWrites && (diskDir == null || simulated)) {
            throw new IllegalArgumentException("--settle-writes needs a node with a disk tier (--disk-dir, without "
                    + "--simulate)");
        }
        if (rowInterval < 0) {
            throw new IllegalArgumentException("--row-interval " + rowInterval + " is invalid; allowed: 0 (none) or a "
                    + "positive number of blocks");
        }
        if (diskDir != null && !simulated) {
            // As serve and burst do: a --disk-dir given must exist (a mistyped path would leave a new directory).
            if (!Files.exists(diskDir)) {
                throw invalidDiskDir("no such directory", "an existing writable directory");
            }
            if (!Files.isDirectory(diskDir)) {
                throw invalidDiskDir("not a directory", WRITABLE_DIRECTORY);
            }
            if (!Files.isWritable(diskDir)) {
                throw invalidDiskDir("not writable", WRITABLE_DIRECTORY);
            }
        }
    }

    private static final String WRITABLE_DIRECTORY = "a writable directory";

    /** The replay's own directory, new, in {@code --disk-dir}; one line saying why when it cannot be made. */
    private Path runDirectory() {
        try {
            return Files.createTempDirectory(diskDir, "replay-");
        } catch (IOException e) {
            throw invalidDiskDir("cannot write a file in it (" + Failures.io(e) + ")", WRITABLE_DIRECTORY);
        }
    }

    /** {@code --disk-dir}'s problem in the words serve and burst use for theirs. */
    private IllegalArgumentException invalidDiskDir(String problem, String allowed) {
        return new IllegalArgumentException("--disk-dir = '" + diskDir + "' is invalid: " + problem + "; allowed: "
                + allowed);
    }

    /** {@code x} as a user would write it: 0 rather than 0.0, 1.5 as it is. */
    private static String number(double x) {
        return x == Math.rint(x) && Math.abs(x) < 1e15 ? Long.toString((long) x) : Double.toString(x);
    }

    private List<TraceRequest> requests() {
        if (generate == null) {
            return MooncakeTrace.read(trace, limit);
        }
        List<TraceRequest> generated = TraceShapes.generate(generate, seed, generatedRequests);
        if (save != null) {
            MooncakeTrace.write(save, generated);
        }
        return limit > 0 && limit < generated.size() ? generated.subList(0, limit) : generated;
    }

    private String source() {
        return generate == null ? trace.toString() : generate + " (seed " + seed + ")";
    }
}
