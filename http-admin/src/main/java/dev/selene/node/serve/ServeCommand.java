package dev.selene.node.serve;

import dev.selene.actors.value.Durations;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.config.CacheConfig;
import dev.selene.node.Failures;
import dev.selene.node.cli.ClusterRemoval;
import dev.selene.node.config.EnvironmentCheck;
import dev.selene.node.config.MachineMemory;
import dev.selene.node.config.NodeOptions;
import dev.selene.node.config.NodeSettings;
import dev.selene.node.config.SettingsLoader;
import dev.selene.node.logging.ConsoleLogging;
import dev.selene.node.workload.WorkloadShapeOptions;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import sun.misc.Signal;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * {@code selene serve}: a long-running node with the cache and the admin HTTP server; SIGTERM or SIGINT stops it
 * cleanly and exits with 0. Its log goes to a file; the terminal shows its start and stop lines and warnings.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run a cache node with its admin HTTP server until SIGTERM (or Ctrl-C), which stops it "
                + "cleanly and exits 0. Exit code 2: a setting or what it names on this machine is invalid "
                + "(one line says which); 1: the node failed, or did not stop within its bound; 4: a pool host the "
                + "cluster removed, or whose managers all left (restart it to rejoin). A second signal exits at once. "
                + "Without a settings file or --warm the warm tier is "
                + ServeCommand.DEFAULT_WARM + " (config/ shows production sizes); the log goes to --log-file, the "
                + "terminal shows warnings and the start and stop lines.")
public final class ServeCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

    /**
     * The warm tier of {@code serve} unless a settings file or {@code --warm} sizes it: small enough for a laptop.
     * A production node sets its own (the files in config/ show 8g).
     */
    static final String DEFAULT_WARM = "1g";

    /** Where the log goes unless {@code --log-file} says otherwise, under the working directory. */
    static final String DEFAULT_LOG_FILE = "logs/selene.log";

    /** Options that only shape {@code --workload}'s burst. */
    private static final List<String> WORKLOAD_ONLY = List.of("--conversations", "--seed", "--tokens", "--turns",
            "--snapshot-ms");

    @Spec
    CommandSpec spec;

    @Mixin
    NodeOptions options;

    @Option(names = "--workload", paramLabel = "burst[:N]", converter = ServedWorkload.Converter.class,
            description = "Drive the burst workload into this node, in this process, to watch its status page, "
                    + "metrics and traces under load: burst or burst:forever (until stopped), burst:N (N runs). "
                    + "The node keeps serving after the last run.")
    ServedWorkload workload;

    @Option(names = "--conversations", paramLabel = "N",
            description = "With --workload: conversations per run (default: 128 on a node with a disk or pool tier; "
                    + "on a memory-only node as many as its warm tier holds, at most 128); the node's concurrency is "
                    + "how many run at once.")
    Integer conversationsOption;

    @Mixin
    WorkloadShapeOptions shape;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "42",
            description = "With --workload: content seed of the first run; each later run adds one (default: "
                    + "${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--log-file", paramLabel = "FILE", defaultValue = DEFAULT_LOG_FILE,
            description = "Where the node's log goes, appended to (default: ${DEFAULT-VALUE}, under the working "
                    + "directory; created with its directory once the settings are checked).")
    Path logFile;

    @Option(names = "--verbose", description = "Show every log line on standard error as well; without it only "
            + "warnings and errors appear there, between the start and stop lines.")
    boolean verbose;

    @Override
    public Integer call() {
        NodeSettings settings = settings();
        CacheConfig c = settings.cache();
        if (workload != null) { // its options are refused, with one line, before anything starts
            long snapshots = ServedWorkload.burst(c, conversations(c), shape.tokens(), shape.turns(),
                    shape.snapshotMillis(), seed, 0).slotsNeeded() * c.layout().slotBytes();
            String unfit = MachineMemory.snapshotsProblem(c, c.device(), snapshots);
            if (unfit != null) {
                throw new IllegalArgumentException(unfit);
            }
        } else {
            for (String o : WORKLOAD_ONLY) {
                if (spec.commandLine().getParseResult().hasMatchedOption(o)) {
                    throw new IllegalArgumentException(o + " shapes the workload a node drives into itself: it "
                            + "needs --workload");
                }
            }
        }
        if (spec.commandLine().getParseResult().hasMatchedOption("--disk-size") && c.diskDir() == null) {
            throw new IllegalArgumentException("--disk-size needs a disk tier: --disk-dir, or selene.disk.dir in "
                    + "--config");
        }
        // What the settings name is checked before the log file is created: a node refused at start leaves nothing.
        EnvironmentCheck.check(settings);
        String unusable = ConsoleLogging.unusable(logFile);
        if (unusable != null) {
            throw new IllegalArgumentException("--log-file '" + logFile + "' is invalid: " + unusable
                    + "; allowed: a file that can be written");
        }
        Path log = logFile.toAbsolutePath().normalize();
        ConsoleLogging logging = ConsoleLogging.toFile(log, verbose);
        try {
            return serve(settings, c, log);
        } finally {
            logging.close();
        }
    }

    /**
     * Ends the process if the node's stop, once begun (a signal, or the cluster removing it), has not ended within
     * its bound: every phase of the stop has a timeout, but a disk or pool call that never returns (a frozen file
     * system) can hold the actor system's end for ever, and a supervisor waits for the process.
     */
    private static void boundTheStop(SeleneNode node) {
        Duration bound = node.stopBound();
        CoordinatedShutdown.get(node.cache().system()).addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(),
                "selene-serve-stop-bound", () -> {
                    Thread.ofPlatform().daemon().name("selene-stop-bound").start(() -> {
                        try {
                            node.whenStopped().toCompletableFuture().get(bound.toSeconds(), TimeUnit.SECONDS);
                        } catch (TimeoutException e) {
                            // a node the cluster removed, or whose managers left, keeps the code that says so
                            int code = ClusterRemoval.downed(node.cache().system())
                                    || ClusterRemoval.poolLost(node.cache().system()) ? ClusterRemoval.EXIT_CODE : 1;
                            LOG.error("the node did not stop within {} s; exiting without it", bound.toSeconds());
                            System.err.println("selene serve: the node did not stop within " + bound.toSeconds()
                                    + " s (a disk or pool operation that does not return: see the log); exiting "
                                    + "with code " + code);
                            System.err.flush();
                            Runtime.getRuntime().halt(code);
                        } catch (InterruptedException | ExecutionException e) {
                            // the process is ending anyway
                        }
                    });
                    return CompletableFuture.completedFuture(Done.getInstance());
                });
    }

    /** Conversations per workload run: {@code --conversations}, or as many as fit the node's tiers. */
    private int conversations(CacheConfig c) {
        return conversationsOption != null ? conversationsOption
                : ServedWorkload.defaultConversations(c, shape.tokens(), shape.turns(), shape.snapshotMillis());
    }

    /** The node's settings: the file's and the flags', over {@code serve}'s own defaults (a smaller warm tier). */
    NodeSettings settings() {
        return options.load(Map.of(SettingsLoader.ROOT + ".warm", DEFAULT_WARM));
    }

    private int serve(NodeSettings settings, CacheConfig c, Path log) {
        // A stop signal is a request to stop, not a failure: the node stops through its coordinated shutdown and
        // main returns 0 (the JVM's default handler would exit with 128 + the signal's number). One that arrives
        // while the node starts (a disk recovery can take minutes) stops it as soon as it is up; a second one
        // then exits at once, as the default handler would.
        CompletableFuture<SeleneNode> started = new CompletableFuture<>();
        AtomicBoolean signalled = new AtomicBoolean();
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), s -> {
                if (signalled.getAndSet(true)) {
                    if (!started.isDone()) {
                        System.exit(128 + s.getNumber());
                    }
                    // a stop under way that the operator will not wait for (a stalled disk, say): end now
                    System.err.println("selene serve: a second signal: exiting without waiting for the stop to end");
                    System.err.flush();
                    Runtime.getRuntime().halt(128 + s.getNumber());
                }
                started.thenAccept(SeleneNode::stop);
            });
        }
        SeleneNode node;
        try {
            node = SeleneNode.start(settings);
        } catch (RuntimeException e) {
            if (!signalled.get()) {
                throw e;
            }
            // asked to stop while starting: the start's own failure (managers not reached yet, say) is not the news
            System.err.println("selene serve: stopped while starting (the start had not finished: "
                    + Failures.message(e) + ")");
            return 0;
        }
        Consumer<String> announce = verbose ? LOG::info : line -> {
            LOG.info(line);
            System.err.println(line);
        };
        System.err.printf("selene serve: %s node, layout %s, warm %s, max age %s; admin http://%s:%d/%n",
                settings.shape(), c.layout().name(), ByteSize.format(c.warmBytes()),
                c.maxAge() == null ? "off" : Durations.human(c.maxAge()),
                dev.selene.node.admin.AdminServer.urlHost(settings.admin().bind()), node.adminPort());
        System.err.println("selene serve: logging to " + log + (verbose ? "" : "; warnings show here too"));
        System.err.flush();
        boundTheStop(node);
        started.complete(node);
        if (workload != null) {
            int conversations = conversations(c);
            announce.accept("selene serve: workload " + (workload.forever() ? "burst until stopped"
                    : "burst, " + workload.runs() + (workload.runs() == 1 ? " run" : " runs")) + ", "
                    + conversations + " conversations of " + shape.tokens() + " tokens each");
            workload.start(node, run -> ServedWorkload.burst(c, conversations, shape.tokens(), shape.turns(),
                    shape.snapshotMillis(), seed, run), () -> signalled.get()
                    || node.whenStopped().toCompletableFuture().isDone(), announce);
        }
        node.whenStopped().toCompletableFuture().join();
        if (ClusterRemoval.downed(node.cache().system())) {
            System.err.println(ClusterRemoval.line("selene serve"));
            return ClusterRemoval.EXIT_CODE;
        }
        if (ClusterRemoval.poolLost(node.cache().system())) {
            System.err.println(ClusterRemoval.poolLostLine("selene serve"));
            return ClusterRemoval.EXIT_CODE;
        }
        System.err.println("selene serve: stopped");
        return 0;
    }
}
