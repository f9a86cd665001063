package dev.selene.node.burst;

import dev.selene.actors.api.SeleneCache;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The untimed bursts that precede a measured one, so that on a small machine the measured run does not share its
 * cores with the compiler: first many tiny records on a memory-only node, for the per-record path; then a burst of
 * the measured layout on the preset's tiers (small, or with a pool as large as the measured run), for every path the
 * measured run takes, the managers' included.
 */
public final class WarmUp {

    /** Conversations of the untimed warm-up run on the preset's tiers (with a pool: as many as the measured run). */
    static final int WARMUP_CONVERSATIONS = 24;

    /**
     * Conversations of the untimed protocol warm-up: tiny records (the {@code small} layout) on a memory-only node,
     * enough publications and restores (six per conversation) for the JIT's optimising compiler to have compiled the
     * per-record path before the measured run, which a warm-up of full-size records cannot give in seconds.
     */
    static final int PROTOCOL_WARMUP_CONVERSATIONS = 1024;

    /** How long {@link #settle} watches the compilers at a time. */
    static final Duration SETTLE_STEP = Duration.ofMillis(500);
    /** Compilers that used less than this share of one core over a step count as quiet. */
    static final double QUIET_CORES = 0.05;
    /** The longest {@link #settle} waits. */
    static final Duration SETTLE_LIMIT = Duration.ofSeconds(20);

    private WarmUp() {
    }

    /**
     * Waits until the JIT compilers of every process of the run have been quiet for one step ({@code compilerNanos}:
     * their CPU time so far), at most {@link #SETTLE_LIMIT}. A warm-up, a node's start and each measured phase leave
     * methods queued for the optimising compiler; on two cores shared by three JVMs that queue takes seconds to
     * drain, and a window that starts before it has drained measures the compilers and the code they have not yet
     * replaced rather than the path. Returns the seconds waited.
     */
    static double settle(LongSupplier compilerNanos) throws InterruptedException {
        return settle(compilerNanos, SETTLE_STEP, SETTLE_LIMIT);
    }

    /** As {@link #settle(LongSupplier)}, watching {@code step} at a time for at most {@code limit}. */
    static double settle(LongSupplier compilerNanos, Duration step, Duration limit) throws InterruptedException {
        long start = System.nanoTime();
        long before = compilerNanos.getAsLong();
        while (System.nanoTime() - start < limit.toNanos()) {
            Thread.sleep(step);
            long now = compilerNanos.getAsLong();
            if (now - before < QUIET_CORES * step.toNanos()) {
                break;
            }
            before = now;
        }
        return (System.nanoTime() - start) / 1e9;
    }

    /**
     * Runs both warm-ups for a burst of {@code settings}: the second on nodes made by {@code nodes} (null: a
     * memory-only node), then {@code afterwards}, whether it succeeded or not.
     */
    static void run(BurstSettings settings, PrintStream progressOut, Function<DeviceCopier, SeleneCache> nodes,
                    Runnable afterwards) throws Exception {
        Layout tiny = Layout.small();
        BurstSettings protocol = new BurstSettings(tiny, PROTOCOL_WARMUP_CONVERSATIONS, settings.concurrency(),
                settings.recordsPerConversation() * tiny.tokensPerRecord(), settings.turns(), 0,
                settings.snapshotMillis(), settings.device(), settings.copyThreads(), 0, settings.seed() + 2,
                false, false, null);
        // A warm tier that holds every tiny record, so the warm-up publishes and restores without evicting.
        new BurstRun(protocol.withWarmBytes(protocol.slotsNeeded() * tiny.slotBytes() * 11 / 10), progressOut)
                .run(false);
        int conversations = conversationsOnTiers(settings);
        long warm = settings.warmBytes() / settings.conversations() * conversations;
        BurstSettings small = new BurstSettings(settings.layout(), conversations, settings.concurrency(),
                settings.tokens(), settings.turns(), warm, settings.snapshotMillis(), settings.device(),
                settings.copyThreads(), settings.bandwidthCap(), settings.seed() + 1, false, false, null,
                settings.poolManagers());
        // On the preset's tiers (a pool, a disk in a scratch directory), so that the compiler has seen every path
        // the measured run takes, the managers' included: with a pool, the drain after the burst and the raw
        // baseline's transfers too.
        try {
            (nodes != null ? new BurstRun(small, progressOut, nodes) : new BurstRun(small, progressOut)).run(false);
        } finally {
            afterwards.run();
        }
    }

    /**
     * Conversations of the warm-up on the preset's tiers for a measured run of {@code settings}. With a pool, as many
     * as the measured run: the data planes' per-chunk paths (a record moves in a few dozen reads and writes, to two
     * replicas and back) cross the optimising compiler's thresholds only after several hundred records, and a
     * warm-up of {@value #WARMUP_CONVERSATIONS} left that compilation inside the measured window. The managers'
     * stores then hold the warm-up's records too, and the measured run evicts the oldest of them, as a full pool does.
     */
    static int conversationsOnTiers(BurstSettings settings) {
        return settings.poolManagers() > 0 ? settings.conversations()
                : Math.min(WARMUP_CONVERSATIONS, settings.conversations());
    }

    /** The scratch directory of a disk preset's warm-up node: beside the tier's, on the same filesystem. */
    public static Path directory(Path tierDir) {
        Path abs = tierDir.toAbsolutePath().normalize();
        return abs.resolveSibling(abs.getFileName() + ".warmup");
    }

    /** Creates the warm-up directory {@code dir}, or says in one line why it cannot. */
    static void createDirectory(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create the warm-up directory " + dir + ": " + e.getMessage());
        }
    }

    /** Deletes a warm-up directory and everything in it (best effort; a later run tries again). */
    public static void deleteDirectory(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | java.io.UncheckedIOException ignored) {
            // best effort: the next run removes what is left
        }
    }
}
