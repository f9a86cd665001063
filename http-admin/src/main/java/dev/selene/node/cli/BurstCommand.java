package dev.selene.node.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.actors.api.SeleneCache;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.node.burst.BurstReport;
import dev.selene.node.burst.BurstRun;
import dev.selene.node.burst.BurstSettings;
import dev.selene.node.burst.PoolManagers;
import dev.selene.node.burst.RawDisk;
import dev.selene.node.burst.WarmUp;
import dev.selene.node.config.EnvironmentCheck;
import dev.selene.node.logging.ConsoleLogging;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** {@code selene burst}: the production burst scenario against an embedded node. */
@Command(name = "burst", mixinStandardHelpOptions = true,
        description = "Replay the production burst: conversations publish under a bounded GPU snapshot budget, "
                + "then a probe restores every conversation and verifies every byte.")
final class BurstCommand implements Callable<Integer> {

    /** Slack added to the warm tier that the memory-only preset sizes to hold the whole burst. */
    static final double AUTO_WARM_SLACK = 1.10;

    /** The pool preset's warm tier, as a share of the burst: small, so most records retire to the pool. */
    static final double POOL_WARM_SHARE = 0.10;

    /** Managers that hold each record in the pool preset (fewer when fewer run). */
    static final int POOL_REPLICAS = 2;

    /** Slack on the managers' store over the burst's records (uploads in flight take slots too). */
    static final double POOL_STORE_SLACK = 1.25;

    /** Exit code of a run that abandoned publications while the disk was full. */
    static final int EXIT_DISK_FULL = 3;

    @Option(names = "--preset", defaultValue = "memory-only",
            description = "Deployment shape: memory-only (default; warm tier sized for the burst), 8g (8 GiB warm "
                    + "tier + disk), disk-only (intake only + disk), pool (a small warm tier retiring to two pool "
                    + "manager JVMs started for the run).")
    String preset;

    @Spec
    CommandSpec spec;

    @Option(names = "--disk-dir", description = "Disk tier directory for the disk presets (default: "
            + ".selene-data/burst-<preset> under the current directory, created when missing; one given must exist; "
            + "emptied first unless --keep-disk); with "
            + "--preset pool, where the managers' logs go.")
    String diskDir;

    @Option(names = "--disk-size", defaultValue = "16g", description = "Disk tier size (default: ${DEFAULT-VALUE}).")
    String diskSize;

    @Option(names = "--keep-disk", description = "Keep what the disk directory holds instead of emptying it first.")
    boolean keepDisk;

    @Option(names = "--restart", description = "After the probe, stop the node (crash-like unless --drain), start a "
            + "new one on the same disk and probe again.")
    boolean restart;

    @Option(names = "--drain", description = "Drain parked records to disk when the node stops.")
    boolean drain;

    @Mixin
    WorkloadOptions workload;

    @Option(names = "--conversations",
            description = "Conversations per run (default: ${DEFAULT-VALUE}).", defaultValue = "128")
    int conversationsOption;

    @Option(names = "--copy-threads", defaultValue = "1",
            description = "Simulated device: copy-engine threads per direction (default: ${DEFAULT-VALUE}).")
    int copyThreads;

    @Option(names = "--bandwidth-cap", defaultValue = "0",
            description = "Simulated device: copy bandwidth cap per direction, bytes/s, e.g. 2g (default: none).")
    String bandwidthCap;

    @Option(names = "--seed", defaultValue = "42", description = "Content seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--no-warmup", description = "Skip the untimed warm-up bursts that run first.")
    boolean noWarmup;

    @Option(names = "--managers", defaultValue = "2", description = "Pool manager JVMs the pool preset starts, 1..3; "
            + "each record is held by two of them, or by one when there is one (default: ${DEFAULT-VALUE}).")
    int managers;

    @Option(names = "--replicas", description = "Managers that hold each record in the pool preset, 1..--managers "
            + "(default: two, or one with one manager).")
    Integer replicas;

    @Option(names = "--pool-tls", description = "Run the pool preset's cluster and data plane over mutual TLS, with "
            + "certificates made by scripts/pool-certs.sh (openssl) in the managers' log directory; without it the "
            + "preset runs them in plain text, on loopback, and its report says so.")
    boolean poolTls;

    @Option(names = "--cpu-hog", description = "Start a second process that burns one core for the whole run, to "
            + "see how admission holds under CPU contention.")
    boolean cpuHog;

    @Option(names = "--json", description = "Print the report as one JSON object on the last line of standard output.")
    boolean json;

    @Option(names = "--no-progress", description = "Do not show progress on standard error.")
    boolean noProgress;

    @Option(names = "--runs", defaultValue = "1", description = "Measured runs, one after another, each on a fresh "
            + "node (the warm-up runs once, first); the report is the last run's, and every ratio against its raw "
            + "path is the median over all runs (default: 1; 1..20; the pool preset runs once).")
    int runs;

    @Option(names = "--verbose", description = "Show the nodes' log lines (INFO and up) on standard error; without "
            + "it only their warnings and errors appear, between the progress lines and the report.")
    boolean verbose;

    /**
     * Deletes what an earlier burst left in {@code dir}: record files, temporaries, the quarantine, the raw-disk
     * baseline. It holds the directory lock while it does (a live node's directory is refused) and refuses a
     * directory holding anything that is not Selene's, so it can never empty a directory it did not fill; refused,
     * it removes the lock file again unless {@code keepLockFile} (the file was there before this run checked it).
     */
    private static void emptyDirectory(Path dir, boolean keepLockFile) throws java.io.IOException {
        if (!Files.exists(dir)) {
            return;
        }
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--disk-dir '" + dir + "' is not a directory");
        }
        try (var lock = dev.selene.transport.disk.DirectoryLock.acquire(dir); var list = Files.list(dir)) {
            List<Path> entries = list.toList();
            try {
                refuseForeign(dir, entries);
            } catch (IllegalArgumentException e) {
                if (!keepLockFile) { // the checks made it: a refused directory is left as it was
                    Files.deleteIfExists(dir.resolve(dev.selene.transport.disk.DirectoryLock.LOCK_FILE_NAME));
                }
                throw e;
            }
            for (Path q : entries) {
                if (q.getFileName().toString().equals(dev.selene.transport.disk.DirectoryLock.LOCK_FILE_NAME)) {
                    continue;
                }
                try (var walk = Files.walk(q)) {
                    for (Path f : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        Files.delete(f);
                    }
                }
            }
        } catch (dev.selene.transport.disk.DirectoryInUseException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
    }

    private static void refuseForeign(Path dir, List<Path> entries) throws java.io.IOException {
        for (Path q : entries) {
            if (!isSelenes(q)) {
                throw new IllegalArgumentException("--disk-dir '" + dir + "' holds files that are not Selene's ("
                        + q.getFileName() + "); use an empty directory, or --keep-disk to reuse its records");
            }
        }
    }

    /**
     * {@code --warm} of a burst or soak on {@code preset}: at least one slot of {@code layout}, or 0 when the preset
     * has another tier ({@code otherTier}; else the node would hold nothing: the presets that have one are named by
     * {@code otherPresets}).
     */
    static long warmOf(String text, String preset, boolean otherTier, Layout layout, String otherPresets) {
        long bytes = ByteSize.parseWarm("--warm", text, layout.slotBytes());
        if (bytes == 0 && !otherTier) {
            throw new IllegalArgumentException("--warm = '" + text + "' is invalid with --preset " + preset
                    + ", which has no other tier (the node would hold nothing); allowed: at least one slot of the "
                    + "layout (" + ByteSize.format(layout.slotBytes()) + "), or --preset " + otherPresets);
        }
        return bytes;
    }

    /** {@code --disk-size} of a disk preset ({@code soak}'s too): at least one record of {@code layout}. */
    static long diskSize(String text, Layout layout) {
        long bytes = ByteSize.parse("--disk-size", text);
        long record = (long) layout.slotsPerRecord(true) * layout.slotBytes();
        if (bytes < record) {
            throw new IllegalArgumentException("--disk-size '" + text + "' is invalid; allowed: at least one record ("
                    + ByteSize.format(record) + "), e.g. 16g");
        }
        return bytes;
    }

    /**
     * Whether {@code p}, an entry of a disk directory, is one a disk tier writes: a record file or its temporary
     * (named as Selene names them, not merely by suffix), the lock file, or a quarantine directory holding only
     * quarantined record files (a record file's name, with {@code .N} where a name was taken twice).
     */
    private static boolean isSelenes(Path p) throws java.io.IOException {
        String n = p.getFileName().toString();
        if (n.equals(dev.selene.transport.disk.RecordFileNames.QUARANTINE_DIRECTORY) && Files.isDirectory(p,
                java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            try (var inside = Files.list(p)) {
                for (Path q : inside.toList()) {
                    String name = q.getFileName().toString().replaceFirst("\\.[0-9]+$", "");
                    if (!Files.isRegularFile(q, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                            || !isRecordName(q.resolveSibling(name))) {
                        return false;
                    }
                }
            }
            return true;
        }
        if (!Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        if (dev.selene.transport.disk.RecordFileNames.isRecordFile(p)) {
            // named as a committed record: one only if it begins as one (a file of someone else's named so is not)
            try (var in = Files.newInputStream(p)) {
                return dev.selene.engine.codec.RecordFileFormat.startsAsRecord(in.readNBytes(4));
            }
        }
        return dev.selene.transport.disk.RecordFileNames.isTemporary(p)
                || n.equals(dev.selene.transport.disk.DirectoryLock.LOCK_FILE_NAME);
    }

    private static boolean isRecordName(Path p) {
        return dev.selene.transport.disk.RecordFileNames.isRecordFile(p)
                || dev.selene.transport.disk.RecordFileNames.isTemporary(p);
    }

    private static void awaitReady(PoolManagers managers) {
        try {
            managers.awaitReady();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the pool managers started");
        }
    }

    /** Whether {@code option} was given on the command line (not left at its default). */
    private boolean given(String option) {
        return spec.commandLine().getParseResult().hasMatchedOption(option);
    }

    @Override
    public Integer call() throws Exception {
        // The terminal shows the progress and the report; the nodes' start-up lines (twice, with the warm-up) and
        // Pekko's connection warnings as the run's nodes stop are not the run's outcome.
        ConsoleLogging logging = ConsoleLogging.quiet(verbose);
        try {
            return runCommand();
        } finally {
            logging.close();
        }
    }

    private int runCommand() throws Exception {
        String p = preset.toLowerCase(Locale.ROOT);
        if (!List.of("memory-only", "8g", "disk-only", "pool").contains(p)) {
            throw new IllegalArgumentException("--preset '" + preset
                    + "' is unknown; allowed: memory-only, 8g, disk-only, pool");
        }
        if (runs < 1 || runs > 20) {
            throw new IllegalArgumentException("--runs " + runs + " is invalid; allowed: 1..20");
        }
        if (runs > 1 && p.equals("pool")) {
            throw new IllegalArgumentException("--runs " + runs + " is invalid with --preset pool; allowed: 1 (the "
                    + "pool's managers hold one run's records)");
        }
        boolean withDisk = p.equals("8g") || p.equals("disk-only");
        boolean withPool = p.equals("pool");
        int conversations = conversationsOption;
        if ((restart || drain) && !withDisk) {
            throw new IllegalArgumentException("--restart and --drain need a disk tier; use --preset 8g or disk-only");
        }
        // An option the preset has no use for is refused rather than ignored: the run would not be the one asked for.
        for (String o : List.of("--disk-size", "--keep-disk")) {
            if (!withDisk && given(o)) {
                throw new IllegalArgumentException(o + " needs a disk tier; use --preset 8g or disk-only");
            }
        }
        if (!withDisk && !withPool && given("--disk-dir")) {
            throw new IllegalArgumentException("--disk-dir needs a disk tier (--preset 8g or disk-only) or --preset "
                    + "pool (its managers' logs)");
        }
        for (String o : List.of("--pool-tls", "--managers", "--replicas")) {
            if (!withPool && given(o)) {
                throw new IllegalArgumentException(o + " needs --preset pool");
            }
        }
        String device = workload.device();
        if (managers < 1 || managers > 3) {
            throw new IllegalArgumentException("--managers " + managers + " is invalid; allowed: 1..3");
        }
        if (replicas != null && (replicas < 1 || replicas > managers)) {
            throw new IllegalArgumentException("--replicas " + replicas + " is invalid; allowed: 1.." + managers
                    + " (--managers)");
        }
        Layout l = Layout.preset(workload.layout);
        BurstSettings probe = new BurstSettings(l, conversations, workload.concurrency, workload.shape.tokens(),
                workload.shape.turns(), 0, workload.shape.snapshotMillis(),
                device, copyThreads, 0, seed, false, false, null);
        long warmBytes;
        if (!workload.autoWarm()) {
            warmBytes = warmOf(workload.warm, p, withDisk || p.equals("pool"), l, "disk-only or pool");
        } else {
            warmBytes = switch (p) {
                case "8g" -> 8L << 30;
                case "disk-only" -> 0;
                case "pool" -> (long) Math.ceil(probe.slotsNeeded() * POOL_WARM_SHARE) * l.slotBytes();
                default -> (long) Math.ceil(probe.slotsNeeded() * AUTO_WARM_SLACK) * l.slotBytes();
            };
        }
        workload.checkFits(CacheConfig.memoryOnly(l, warmBytes).withConcurrency(workload.concurrency),
                probe.slotsNeeded() * l.slotBytes());
        Path dir = null;
        long diskBytes = 0;
        if (withDisk) {
            dir = Path.of(diskDir != null ? diskDir : ".selene-data/burst-" + p).toAbsolutePath();
            diskBytes = diskSize(diskSize, l);
            // As serve does: a --disk-dir given is used as it is, never created (a typo would fill a new directory);
            // the preset's own directory is created. Either must take a file and not be held by a running node.
            boolean lockFileWasThere = Files.exists(dir.resolve(
                    dev.selene.transport.disk.DirectoryLock.LOCK_FILE_NAME));
            EnvironmentCheck.diskDirectory("--disk-dir", dir.toString(), diskDir == null, "an existing writable "
                    + "directory, or no --disk-dir for the preset's own (.selene-data/burst-" + p + ")");
            if (!keepDisk) {
                emptyDirectory(dir, lockFileWasThere);
            }
            RawDisk.removeLeftover(dir);
            WarmUp.deleteDirectory(WarmUp.directory(dir));
        }
        long cap = ByteSize.parse("--bandwidth-cap", bandwidthCap);
        BurstSettings settings = new BurstSettings(l, conversations, workload.concurrency, workload.shape.tokens(),
                workload.shape.turns(), warmBytes,
                workload.shape.snapshotMillis(), device, copyThreads, cap, seed, !noProgress, restart, dir,
                withPool ? managers : 0);
        CacheConfig config = CacheConfig.memoryOnly(l, warmBytes).withConcurrency(workload.concurrency)
                .withDrainOnShutdown(drain);
        if (dir != null) {
            config = config.withDisk(dir.toString(), diskBytes);
        }
        System.err.printf(Locale.ROOT, "selene burst: %s, %d conversations of %d records (%d at once), warm %s%n",
                l.name(), conversations, settings.recordsPerConversation(), workload.concurrency,
                ByteSize.format(warmBytes));
        Process hog = cpuHog ? startCpuHog() : null;
        // Ended from outside (Ctrl-C, SIGTERM), the process skips the finally below: the hook ends the hog then.
        Thread hogStop = hog == null ? null : new Thread(hog::destroyForcibly, "burst-cpu-hog-stop");
        if (hogStop != null) {
            Runtime.getRuntime().addShutdownHook(hogStop);
        }
        List<BurstReport> reports = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < runs; i++) {
                if (i > 0 && dir != null && !keepDisk) {
                    emptyDirectory(dir, true);
                }
                BurstReport r = run(settings, config, probe, l, withPool, i == 0 && !noWarmup);
                reports.add(r);
                if (runs > 1) {
                    System.err.printf(Locale.ROOT, "run %d/%d: %s%n", i + 1, runs, BurstReport.ratioLine(r.ratios()));
                }
            }
        } finally {
            if (hog != null) {
                hog.destroyForcibly();
                hog.waitFor(10, TimeUnit.SECONDS);
                try {
                    Runtime.getRuntime().removeShutdownHook(hogStop);
                } catch (IllegalStateException e) {
                    // the process is ending: the hook runs and finds the hog gone
                }
            }
        }
        BurstReport report = reports.getLast();
        System.out.print(report.table());
        Map<String, Double> medians = BurstReport.medians(reports);
        if (runs > 1) {
            System.out.printf(Locale.ROOT, "  %-42s %s%n", "median of " + runs + " runs", BurstReport.ratioLine(medians));
        }
        System.out.println(report.verdict());
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>(report.toMap());
            m.put("cpu_hog", cpuHog);
            m.put("runs", runs);
            if (runs > 1) {
                m.putAll(medians); // the ratio fields are the medians over all runs
                m.put("runs_ratios", reports.stream().map(BurstReport::ratios).toList());
                m.put("runs_reports", reports.stream().map(BurstReport::toMap).toList()); // every figure, per run
            }
            System.out.println(new ObjectMapper().writeValueAsString(m));
        }
        BurstReport lost = reports.stream().filter(BurstReport::lostToFullDisk).findFirst().orElse(null);
        if (lost != null) {
            System.err.printf(Locale.ROOT, "selene burst: the disk filled up (%d writes found it full) and %d "
                    + "publications were abandoned; give the disk tier a size its filesystem can hold (--disk-size)%n",
                    lost.diskFull(), lost.abandonedTotal());
        }
        int code = 0; // the worst run decides: a full disk over anything lost or wrong over success
        for (BurstReport r : reports) {
            int c = exitCode(r);
            if (c == EXIT_DISK_FULL || code == 0) {
                code = c == 0 ? code : c;
            }
        }
        return code;
    }

    /** 3 when publications were abandoned while the disk was full, else 0 when nothing is lost or wrong, else 1. */
    static int exitCode(BurstReport report) {
        if (report.lostToFullDisk()) {
            return EXIT_DISK_FULL;
        }
        return report.complete() ? 0 : 1;
    }

    /**
     * Makes the pool's certificates for a TLS run in {@code logs}/certs: a CA, pool-manager-1..3 and host, with
     * scripts/pool-certs.sh (found from the working directory up).
     */
    private static Path poolCertificates(Path logs) throws IOException, InterruptedException {
        Path script = null;
        for (Path p = Path.of("").toAbsolutePath(); p != null && script == null; p = p.getParent()) {
            Path s = p.resolve("scripts/pool-certs.sh");
            if (Files.isExecutable(s)) {
                script = s;
            }
        }
        if (script == null) {
            throw new IllegalStateException("--pool-tls needs scripts/pool-certs.sh: run selene burst from the "
                    + "repository (or a directory under it)");
        }
        Path certs = logs.resolve("certs");
        Process p = new ProcessBuilder(script.toString(), "--new-ca", certs.toString(), "pool-manager-1",
                "pool-manager-2", "pool-manager-3", "host").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("--pool-tls: scripts/pool-certs.sh could not make the certificates "
                    + "(is openssl installed?)");
        }
        System.err.printf(Locale.ROOT, "selene burst: the pool runs mutual TLS on both planes (certificates in %s)%n",
                certs);
        return certs;
    }

    /** A child process that spins on one core until it is destroyed (the shell's busy loop, nothing else). */
    private static Process startCpuHog() throws IOException {
        Process p = new ProcessBuilder("sh", "-c", "while :; do :; done").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        System.err.printf(Locale.ROOT, "selene burst: a second process (pid %d) burns one core for the whole run%n",
                p.pid());
        return p;
    }

    private BurstReport run(BurstSettings settings, CacheConfig config, BurstSettings probe, Layout l,
                            boolean withPool, boolean warmUp) throws Exception {
        BurstReport report;
        if (withPool) {
            long storeBytes = (long) Math.ceil(probe.slotsNeeded() * POOL_STORE_SLACK) * l.slotBytes();
            Path logs = Path.of(diskDir != null ? diskDir : ".selene-data/burst-pool").toAbsolutePath();
            String named = diskDir != null ? "--disk-dir '" + diskDir + "'" : "the managers' log directory '" + logs
                    + "'";
            if (Files.exists(logs) && !Files.isDirectory(logs)) {
                throw new IllegalArgumentException(named + " is invalid: not a directory; allowed: a writable "
                        + "directory");
            }
            try {
                Files.createDirectories(logs);
                Files.deleteIfExists(Files.createTempFile(logs, ".probe", ".tmp"));
            } catch (java.io.IOException e) {
                throw new IllegalArgumentException(named + " is invalid: " + dev.selene.node.Failures.io(e)
                        + "; allowed: a writable directory");
            }
            System.err.printf(Locale.ROOT, "selene burst: starting %d pool managers of %s each (logs in %s)%n",
                    managers, ByteSize.format(storeBytes), logs);
            // The managers start in their own JVMs while this one runs the warm-up; the pool node waits for them.
            Path certs = poolTls ? poolCertificates(logs) : null;
            try (PoolManagers pool = PoolManagers.start(managers, l, storeBytes,
                    replicas != null ? replicas : Math.min(POOL_REPLICAS, managers), logs, certs)) {
                CacheConfig hostConfig = config;
                java.util.function.Function<dev.selene.transport.gpu.DeviceCopier, SeleneCache> host = copier -> {
                    awaitReady(pool);
                    if (certs == null) {
                        return SeleneCache.start(hostConfig.withPool(pool.addresses()), copier);
                    }
                    return SeleneCache.start(hostConfig.withPool(pool.addresses()), copier,
                            com.typesafe.config.ConfigFactory.parseString(PoolManagers.tlsSettings(certs, "host"))
                                    .withFallback(dev.selene.actors.api.CacheSettings.standaloneSystemConfig()),
                            "selene");
                };
                report = new BurstRun(settings, System.err, host).withWarmUpNodes(host, () -> { })
                        .withPeerCpu(pool::cpuNanos, pool::dataCpuNanos, () -> pool.managers().stream().map(m -> m.process().pid()).toList()).run(warmUp);
            }
        } else {
            CacheConfig nodeConfig = config;
            BurstRun run = new BurstRun(settings, System.err, copier -> SeleneCache.start(nodeConfig, copier));
            if (settings.diskDir() != null) {
                // The warm-up writes and reads a disk too, in a scratch directory beside the tier's, deleted after.
                run = run.withDiskWarmUp(nodeConfig, settings.diskDir());
            }
            report = run.run(warmUp);
        }
        return report;
    }
}
