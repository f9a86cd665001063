package dev.selene.node.cli;

import dev.selene.actors.api.SeleneCache;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.node.burst.BurstReport;
import dev.selene.node.burst.BurstRun;
import dev.selene.node.Failures;
import dev.selene.node.OwnDirectory;
import dev.selene.node.burst.RawDisk;
import dev.selene.node.burst.WarmUp;
import dev.selene.node.burst.BurstSettings;
import dev.selene.node.config.EnvironmentCheck;
import dev.selene.node.config.NodeSettings;
import dev.selene.node.config.SettingsLoader;
import dev.selene.node.logging.ConsoleLogging;
import dev.selene.node.serve.SeleneNode;
import dev.selene.transport.gpu.DeviceCopier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * {@code selene soak}: production bursts back to back in one JVM for a set time, each on a node with the admin
 * server on, printing after every burst what would show a leak (resident memory, heap after a full GC, threads,
 * open files) and what would show a loss (publications not stored).
 */
@Command(name = "soak", mixinStandardHelpOptions = true,
        description = "Run the production burst back to back for a set time, each burst on a fresh node with the "
                + "admin server on one port, and print after every burst the process's resident memory, heap after "
                + "a full GC, threads, open files, records held and publications lost; exit 0 only if nothing was "
                + "lost and every restored byte matched.")
final class SoakCommand implements Callable<Integer> {

    /* Each burst runs on its own node (BurstRun starts a node per run and stops it at the end): the figures after
     * a burst are taken between two nodes, so anything a node leaves behind when it stops (threads, file
     * descriptors, off-heap memory, objects reachable from static state) shows up as growth from line to line.
     * The first burst also warms the JIT, Kamon and class loading up, so growth is measured from the line after
     * it, not from the line before it. Every node binds the admin server on the same port (the first node's, when
     * the setting picks a free one), so the status page keeps its address across bursts. */

    /** The longest soak: a week. */
    static final int MAX_MINUTES = 7 * 24 * 60;

    @Spec
    CommandSpec spec;

    @Option(names = "--minutes", defaultValue = "20",
            description = "How long to keep starting bursts; fractions allowed, e.g. 0.1 (default: ${DEFAULT-VALUE}).")
    String minutesText;

    @Option(names = "--preset", defaultValue = "memory-only",
            description = "Deployment shape: memory-only (default; warm tier sized for the burst), 8g (8 GiB warm "
                    + "tier + disk), disk-only (intake only + disk).")
    String preset;

    @Option(names = "--disk-dir", description = "Disk tier directory of the disk presets; must be empty or absent, "
            + "and is kept (default: a new directory under .selene-data, deleted at the end).")
    String diskDir;

    @Option(names = "--disk-size", defaultValue = "16g", description = "Disk tier size (default: ${DEFAULT-VALUE}).")
    String diskSize;

    @Mixin
    WorkloadOptions workload;

    @Option(names = "--conversations", defaultValue = "128", description = "Conversations per burst (default: ${DEFAULT-VALUE}).")
    int conversations;

    @Option(names = "--seed", defaultValue = "42",
            description = "Content seed of the first burst; each later burst adds one (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--admin-port", description = "Admin HTTP port of every burst's node; 0 = a free port, kept for "
            + "the whole soak (default: selene.admin.port, 8077).")
    Integer adminPort;

    @Option(names = "--no-warmup", description = "Skip the small untimed warm-up burst before the first burst.")
    boolean noWarmup;

    /**
     * What the process looks like between two bursts.
     *
     * @param elapsedSeconds   since the soak started
     * @param bursts           bursts finished
     * @param rssBytes         resident set size (VmRSS), -1 where /proc is absent
     * @param heapAfterGcBytes heap in use right after a full collection
     * @param threads          live threads
     * @param openFiles        open file descriptors, -1 where /proc is absent
     * @param records          records the last burst's node held in memory when it began to stop
     * @param diskRecords      record files the last burst's node held when it began to stop
     * @param lost             publications lost so far: abandoned, or never answered
     */
    record Sample(double elapsedSeconds, int bursts, long rssBytes, long heapAfterGcBytes, int threads,
                  long openFiles, long records, long diskRecords, long lost) {

        String line() {
            return String.format(Locale.ROOT, "soak %7.1fs  bursts %4d  rss %6s MiB  heap-after-gc %5s MiB  "
                            + "threads %4d  fds %4d  records %6d  disk-records %7d  lost %d", elapsedSeconds, bursts,
                    mib(rssBytes), mib(heapAfterGcBytes), threads, openFiles, records, diskRecords, lost);
        }
    }

    @Override
    public Integer call() throws Exception {
        // As burst: the terminal shows the soak's lines and warnings; its nodes' start and stop lines are not news.
        try (ConsoleLogging quiet = ConsoleLogging.quiet(false)) {
            return soakCommand();
        }
    }

    private int soakCommand() throws Exception {
        double minutes;
        try {
            minutes = Double.parseDouble(minutesText);
        } catch (NumberFormatException e) {
            minutes = Double.NaN;
        }
        if (!(minutes > 0) || minutes > MAX_MINUTES) {
            throw new IllegalArgumentException("--minutes = '" + minutesText + "' is invalid; allowed: a number of "
                    + "minutes above 0 and at most " + MAX_MINUTES + ", e.g. 0.5 or 20");
        }
        String p = preset.toLowerCase(Locale.ROOT);
        if (!p.equals("memory-only") && !p.equals("8g") && !p.equals("disk-only")) {
            throw new IllegalArgumentException("--preset '" + preset + "' is unknown; allowed: memory-only, 8g, disk-only");
        }
        String device = workload.device();
        Layout l = Layout.preset(workload.layout);
        BurstSettings shape = settings(l, 0, seed, null);
        long warmBytes = workload.autoWarm() ? switch (p) {
            case "8g" -> 8L << 30;
            case "disk-only" -> 0;
            default -> (long) Math.ceil(shape.slotsNeeded() * BurstCommand.AUTO_WARM_SLACK) * l.slotBytes();
        } : BurstCommand.warmOf(workload.warm, p, !p.equals("memory-only"), l, "8g or disk-only");
        NodeSettings node = SettingsLoader.load(null, adminPort == null ? Map.of()
                : Map.of(SettingsLoader.ROOT + ".admin.port", adminPort.toString()));
        EnvironmentCheck.checkAdmin(node); // a port in use is one line before anything is printed or created
        CacheConfig config = CacheConfig.memoryOnly(l, warmBytes).withConcurrency(workload.concurrency);
        workload.checkFits(config, shape.slotsNeeded() * l.slotBytes());
        Path dir = null;
        boolean ownDir = false;
        if (p.equals("memory-only")) {
            for (String o : List.of("--disk-dir", "--disk-size")) {
                if (spec.commandLine().getParseResult().hasMatchedOption(o)) {
                    throw new IllegalArgumentException(o + " needs a disk tier; use --preset 8g or disk-only");
                }
            }
        } else {
            long diskBytes = BurstCommand.diskSize(diskSize, l);
            if (diskDir == null) {
                try {
                    dir = Files.createTempDirectory(Files.createDirectories(Path.of(".selene-data")), "soak-")
                            .toAbsolutePath();
                } catch (IOException e) {
                    throw new IllegalArgumentException("the soak's disk directory cannot be created under "
                            + Path.of(".selene-data").toAbsolutePath() + " (" + Failures.io(e) + "); give --disk-dir");
                }
                ownDir = true;
            } else {
                dir = requireEmpty(Path.of(diskDir).toAbsolutePath());
            }
            config = config.withDisk(dir.toString(), diskBytes);
        }
        // Stopped from outside (Ctrl-C, SIGTERM), the process skips the finally below: the hook says what the soak
        // measured until then and deletes the directory it made.
        Path made = ownDir ? dir : null;
        Thread interrupted = new Thread(() -> interrupted(made), "soak-interrupted");
        Runtime.getRuntime().addShutdownHook(interrupted);
        try {
            return soak(node.withCache(config), l, warmBytes, dir, minutes);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(interrupted);
            } catch (IllegalStateException e) {
                // the process is ending: the hook runs
            }
            if (ownDir) {
                OwnDirectory.delete(dir);
            }
        }
    }

    /** The soak's nodes, for a soak stopped from outside; null before the first. */
    private volatile NodeHolder nodes;

    /** The soak's figures so far, for a soak stopped from outside; null before the first line. */
    private volatile String soFar;

    /** Set when the soak is stopped from outside: the burst that the stop cut short prints no line of its own. */
    private volatile boolean stopped;

    /**
     * A soak stopped from outside: the summary of the bursts that finished, one line saying so, and the directory it
     * made deleted.
     */
    private void interrupted(Path made) {
        stopped = true;
        String summary = soFar;
        System.out.print(summary == null ? "" : summary);
        System.err.println("selene soak: stopped before its time was up; the summary covers the bursts that finished");
        if (made != null) {
            OwnDirectory.deleteWhileStopping(made, () -> {
                NodeHolder h = nodes;
                return h == null ? null : h.stopped();
            });
            // the scratch directories a burst keeps beside its tier's while it warms up and measures the raw disk
            OwnDirectory.deleteWhileStopping(WarmUp.directory(made), () -> null);
            OwnDirectory.deleteWhileStopping(RawDisk.beside(made), () -> null);
        }
    }

    private int soak(NodeSettings first, Layout l, long warmBytes, Path dir, double minutes) throws Exception {
        PrintStream out = System.out;
        System.err.printf(Locale.ROOT, "selene soak: %.1f min of bursts: %s, %d conversations of %d records (%d at "
                        + "once), %s node, warm %s%n", minutes, l.name(), conversations,
                settings(l, warmBytes, seed, dir).recordsPerConversation(), workload.concurrency, first.shape(),
                ByteSize.format(warmBytes));
        long start = System.nanoTime();
        long deadline = start + (long) (minutes * 60e9);
        NodeHolder holder = new NodeHolder(first);
        nodes = holder;
        long published = 0;
        long lost = 0;
        int unverified = 0;
        Sample startSample = sample(start, 0, 0, 0, 0);
        out.println(startSample.line());
        Sample warmedUp = null;
        Sample last = startSample;
        for (int burst = 0; burst == 0 || System.nanoTime() < deadline; burst++) {
            BurstSettings s = settings(l, warmBytes, seed + burst, dir);
            BurstRun run = new BurstRun(s, System.err, holder::start);
            if (dir != null) {
                run = run.withDiskWarmUp(first.cache(), dir);
            }
            BurstReport report = run.run(burst == 0 && !noWarmup);
            if (stopped) {
                return 1; // the stop cut this burst short; the hook has printed what finished before it
            }
            long burstPublished = ((Number) report.toMap().get("published")).longValue();
            published += burstPublished;
            lost += report.abandonedTotal() + (burstPublished - report.accountedFor());
            if (!report.verified()) {
                unverified++;
            }
            last = sample(start, burst + 1, holder.records.get(), holder.diskRecords.get(), lost);
            out.println(last.line());
            if (warmedUp == null) {
                warmedUp = last;
            }
            soFar = summary(startSample, warmedUp, last, published, lost, unverified);
        }
        soFar = null; // printed here: the hook, should it still run, prints nothing twice
        out.print(summary(startSample, warmedUp, last, published, lost, unverified));
        return lost == 0 && unverified == 0 ? 0 : 1;
    }

    /**
     * Starts each burst's node on the admin port the first one bound, and takes the records it holds as it
     * begins to stop (the first phase of its coordinated shutdown, when the burst and its probe are done).
     */
    private static final class NodeHolder {
        private NodeSettings settings;
        private boolean announced;
        /** The burst's node now running (or last run); null before the first. */
        private volatile SeleneCache current;
        final AtomicLong records = new AtomicLong();
        final AtomicLong diskRecords = new AtomicLong();

        NodeHolder(NodeSettings settings) {
            this.settings = settings;
        }

        SeleneCache start(DeviceCopier copier) {
            SeleneNode node = SeleneNode.start(settings, copier);
            if (settings.admin().port() == 0) {
                settings = settings.withAdmin(settings.admin().withPort(node.adminPort()));
            }
            if (!announced) {
                System.err.printf(Locale.ROOT, "selene soak: admin http://%s:%d/ (each burst's node in turn)%n",
                        dev.selene.node.admin.AdminServer.urlHost(settings.admin().bind()), node.adminPort());
                announced = true;
            }
            SeleneCache cache = node.cache();
            current = cache;
            CoordinatedShutdown.get(cache.system()).addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(),
                    "soak-records-held", () -> cache.status().handle((s, e) -> {
                        if (s != null) {
                            records.set(s.residentRecords());
                            diskRecords.set(s.disk() == null ? 0 : s.disk().records());
                        }
                        return Done.getInstance();
                    }));
            return cache;
        }

        /** When the node now running (or last run) has stopped; null when none was started. */
        CompletionStage<?> stopped() {
            SeleneCache node = current;
            return node == null ? null : node.system().getWhenTerminated();
        }
    }

    private BurstSettings settings(Layout l, long warmBytes, long burstSeed, Path dir) {
        return new BurstSettings(l, conversations, workload.concurrency, workload.shape.tokens(), workload.shape.turns(), warmBytes,
                workload.shape.snapshotMillis(), workload.device(),
                1, 0, burstSeed, false, false, dir);
    }

    /** The process's figures now, after a full collection. */
    private static Sample sample(long startNanos, int bursts, long records, long diskRecords, long lost) {
        System.gc();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        return new Sample((System.nanoTime() - startNanos) / 1e9, bursts, rssBytes(), heap,
                ManagementFactory.getThreadMXBean().getThreadCount(), openFiles(), records, diskRecords, lost);
    }

    private String summary(Sample start, Sample warmedUp, Sample end, long published, long lost, int unverified) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "soak summary: %.1f min, %d bursts, %d publications, %d lost, %s%n",
                end.elapsedSeconds() / 60, end.bursts(), published, lost, unverified == 0
                        ? "every restored byte matched" : unverified + " bursts restored bytes that differ"));
        b.append(String.format(Locale.ROOT, "  %-22s %12s %12s %12s %12s%n", "", "start", "after burst 1", "end",
                "end - burst 1"));
        row(b, "rss MiB", mib(start.rssBytes()), mib(warmedUp.rssBytes()), mib(end.rssBytes()),
                signedMib(end.rssBytes() - warmedUp.rssBytes()));
        row(b, "heap after GC MiB", mib(start.heapAfterGcBytes()), mib(warmedUp.heapAfterGcBytes()),
                mib(end.heapAfterGcBytes()), signedMib(end.heapAfterGcBytes() - warmedUp.heapAfterGcBytes()));
        row(b, "threads", start.threads(), warmedUp.threads(), end.threads(), end.threads() - warmedUp.threads());
        row(b, "open files", start.openFiles(), warmedUp.openFiles(), end.openFiles(),
                end.openFiles() - warmedUp.openFiles());
        row(b, "records held", start.records(), warmedUp.records(), end.records(), end.records() - warmedUp.records());
        return b.toString();
    }

    private static void row(StringBuilder b, String name, Object start, Object warmedUp, Object end, Object delta) {
        b.append(String.format(Locale.ROOT, "  %-22s %12s %12s %12s %12s%n", name, start, warmedUp, end,
                delta instanceof Number n && n.longValue() > 0 ? "+" + n : delta));
    }

    private static String mib(long bytes) {
        return bytes < 0 ? "n/a" : String.format(Locale.ROOT, "%.1f", bytes / (double) (1L << 20));
    }

    private static String signedMib(long bytes) {
        return String.format(Locale.ROOT, "%+.1f", bytes / (double) (1L << 20));
    }

    /** VmRSS from /proc/self/status, in bytes; -1 where there is none. */
    private static long rssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }

    /** Open file descriptors (entries of /proc/self/fd, less the one listing them); -1 where there is none. */
    private static long openFiles() {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count() - 1;
        } catch (IOException e) {
            return -1;
        }
    }

    private static Path requireEmpty(Path dir) throws IOException {
        if (Files.exists(dir)) {
            if (!Files.isDirectory(dir)) {
                throw new IllegalArgumentException("--disk-dir '" + dir + "' is not a directory");
            }
            try (Stream<Path> s = Files.list(dir)) {
                if (s.findAny().isPresent()) {
                    throw new IllegalArgumentException("--disk-dir '" + dir + "' is not empty; allowed: an empty or "
                            + "absent directory (or leave it out for a new one that is deleted at the end)");
                }
            }
        }
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalArgumentException("--disk-dir '" + dir + "' cannot be created (" + Failures.io(e) + ")");
        }
    }
}
