package dev.selene.node.burst;

import dev.selene.actors.api.SeleneCache;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.function.Function;

/**
 * The untimed bursts that precede a measured one, so that on a small machine the measured run does not share its
 * cores with the compiler: first many tiny records on a memory-only node, for the per-record path; then a small
 * burst of the measured layout on the preset's tiers, for every path the measured run takes, the managers' included.
 */
public final class WarmUp {

    /** Conversations of the untimed warm-up run on the preset's tiers. */
    static final int WARMUP_CONVERSATIONS = 24;

    /**
     * Conversations of the untimed protocol warm-up: tiny records (the {@code small} layout) on a memory-only node,
     * enough publications and restores (six per conversation) for the JIT's optimising compiler to have compiled the
     * per-record path before the measured run, which a warm-up of full-size records cannot give in seconds.
     */
    static final int PROTOCOL_WARMUP_CONVERSATIONS = 1024;

    private WarmUp() {
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
        int conversations = Math.min(WARMUP_CONVERSATIONS, settings.conversations());
        long warm = settings.warmBytes() / settings.conversations() * conversations;
        BurstSettings small = new BurstSettings(settings.layout(), conversations, settings.concurrency(),
                settings.tokens(), settings.turns(), warm, settings.snapshotMillis(), settings.device(),
                settings.copyThreads(), settings.bandwidthCap(), settings.seed() + 1, false, false, null);
        // On the preset's tiers (a pool, a disk in a scratch directory), so that the compiler has seen every path
        // the measured run takes, the managers' included.
        try {
            (nodes != null ? new BurstRun(small, progressOut, nodes) : new BurstRun(small, progressOut)).run(false);
        } finally {
            afterwards.run();
        }
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
