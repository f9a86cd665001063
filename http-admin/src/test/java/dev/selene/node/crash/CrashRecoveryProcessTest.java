package dev.selene.node.crash;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.DirectRecordIo;
import dev.selene.transport.disk.RecordFileNames;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A disk-only {@code selene burst} in a child JVM killed with SIGKILL at a seeded random moment of its publish phase
 * (0.5 to 3 s in, while records stream through the intake to disk), again and again on one directory; after each
 * kill a node started on that directory recovers exactly the record files the kill left, restores every one of them
 * byte-identically and leaves no temporary behind. The publish phase starts once the burst has printed the line of
 * its raw baselines' first halves, which run for seconds after the prefill.
 *
 * <p>A record file appears only after its footer is fsynced and its temporary renamed into place, so the
 * {@code .rec} files listed right after a kill are exactly the committed records. Their content is derived from
 * their keys ({@link KeyedContent}), so the test needs nothing from the dead process to check them.
 *
 * <p>By default it kills three times (well under a minute on 2 cores); {@code -Dselene.crash.kills=50} runs the
 * long form and {@code -Dselene.crash.seed=N} replays a run. Each kill prints one line and the run a summary.
 */
@Tag("process")
class CrashRecoveryProcessTest {

    /** System property: how many kills (default {@value #DEFAULT_KILLS}). */
    static final String KILLS_PROPERTY = "selene.crash.kills";
    /** System property: the seed of the kill moments and the bursts' content (default: the clock). */
    static final String SEED_PROPERTY = "selene.crash.seed";
    static final int DEFAULT_KILLS = 3;

    /** Earliest kill after the child's burst has begun publishing: by then the intake has filled and spills run. */
    static final long MIN_KILL_DELAY_MILLIS = 500;
    /** Latest kill after the child's burst has begun publishing. */
    static final long MAX_KILL_DELAY_MILLIS = 3_000;
    /** Longest a child may take to start its node (JVM start and the recovery scan). */
    static final Duration CHILD_START_TIMEOUT = Duration.ofSeconds(90);
    /** Longest one chain's restore may take. */
    static final Duration RESTORE_TIMEOUT = Duration.ofSeconds(60);

    static final Layout LAYOUT = Layout.small();
    static final int CONCURRENCY = 8;
    /** Conversations of the child's burst: enough that a kill always lands before it ends on a slow disk. */
    static final int CONVERSATIONS = 600;
    /** Records per conversation (tokens / tokens per record); one turn per record, so every record has a row. */
    static final int RECORDS_PER_CONVERSATION = 8;
    static final String DISK_SIZE = "4g";
    static final long DISK_BYTES = 4L << 30;

    private static final Pattern CHILD_RECOVERED = Pattern.compile("disk tier .*: recovered (\\d+) records");
    /** The progress line of the raw baselines' first halves: the burst's publications start right after it. */
    private static final Pattern CHILD_PUBLISHING = Pattern.compile("^baseline .* first halves done");

    /** What one kill left on disk and what the node started after it found. */
    private record Round(int kill, long delayMillis, boolean killedMidRun, int committed, int newRecords,
                         int temporariesLeft, long recovered, int restored) {

        String line(int kills) {
            return String.format(Locale.ROOT, "crash %d/%d: killed %s%d ms into the burst; %d record files committed "
                            + "(%d new), %d temporaries left by the kill; restart recovered %d, restored %d new "
                            + "byte-identically, 0 temporaries after recovery", kill, kills,
                    killedMidRun ? "" : "(the burst had already ended) ", delayMillis, committed, newRecords,
                    temporariesLeft, recovered, restored);
        }
    }

    @Test
    void kill9DuringDiskBurst_everyCommittedRecordRestoresByteIdentically_andNoTemporarySurvivesRecovery()
            throws Exception {
        int kills = Integer.getInteger(KILLS_PROPERTY, DEFAULT_KILLS);
        long seed = Long.getLong(SEED_PROPERTY, System.nanoTime());
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "crash-tests")), "kill9-")
                .toAbsolutePath();
        System.out.printf(Locale.ROOT, "crash test: %d kills, seed %d (replay with -D%s=%d), in %s (kept if it "
                + "fails)%n", kills, seed, SEED_PROPERTY, seed, dir);
        Random random = new Random(seed);
        long start = System.nanoTime();
        Map<RecordKey, RecordSpec> committed = new HashMap<>();
        List<Round> rounds = new ArrayList<>();
        for (int kill = 1; kill <= kills; kill++) {
            Round r = killAndRecover(dir, kill, random, committed);
            rounds.add(r);
            System.out.println(r.line(kills));
        }
        assertTrue(!committed.isEmpty(), "no kill landed after a record file was committed: " + rounds);
        int restoredAtEnd = restoreAll(dir, committed, Set.copyOf(committed.keySet()));
        assertEquals(committed.size(), restoredAtEnd, "every record committed in any round restores at the end");
        System.out.printf(Locale.ROOT, "crash test summary: seed %d, %d kills (%d mid-run), %d records committed "
                        + "(%d..%d per kill), %d restored byte-identically at the end, 0 temporaries left, "
                        + "0 quarantined, %.1f s%n", seed, kills, rounds.stream().filter(Round::killedMidRun).count(),
                committed.size(), rounds.stream().mapToInt(Round::newRecords).min().orElse(0),
                rounds.stream().mapToInt(Round::newRecords).max().orElse(0), restoredAtEnd,
                (System.nanoTime() - start) / 1e9);
        deleteTree(dir);
    }

    /**
     * Starts a burst on {@code dir}, kills it at a random moment, then checks what a restart finds; adds the
     * records committed this round to {@code committed}.
     */
    private Round killAndRecover(Path dir, int kill, Random random, Map<RecordKey, RecordSpec> committed)
            throws Exception {
        long delay = random.nextLong(MIN_KILL_DELAY_MILLIS, MAX_KILL_DELAY_MILLIS);
        long burstSeed = random.nextInt(1 << 30);
        List<String> err = new CopyOnWriteArrayList<>();
        Process child = startBurst(dir, burstSeed, err);
        boolean killedMidRun;
        try {
            Matcher recoveredByChild = await(child, err, CHILD_RECOVERED);
            assertEquals(committed.size(), Long.parseLong(recoveredByChild.group(1)),
                    "the child recovers every record file committed before it started");
            await(child, err, CHILD_PUBLISHING);
            killedMidRun = !child.waitFor(delay, TimeUnit.MILLISECONDS);
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child did not die within 30 s of SIGKILL");
            if (!killedMidRun) {
                assertEquals(0, child.exitValue(), "the burst ended on its own but failed: " + String.join("\n", err));
            }
        } finally {
            end(child);
        }

        List<Path> recordFiles = list(dir, RecordFileNames::isRecordFile);
        int temporaries = list(dir, RecordFileNames::isTemporary).size();
        Map<RecordKey, RecordSpec> found = headers(recordFiles);
        assertTrue(found.keySet().containsAll(committed.keySet()), "a record committed before this kill vanished");
        Set<RecordKey> fresh = new HashSet<>(found.keySet());
        fresh.removeAll(committed.keySet());
        committed.putAll(found);

        try (SimulatedDevice device = SimulatedDevice.create(); SeleneCache node = start(dir, device)) {
            long recovered = node.counters().get("disk.recovered");
            assertEquals(found.size(), recovered, "the restart recovers exactly the committed record files");
            assertEquals(0, node.counters().get("disk.quarantined"), "no committed file fails validation");
            assertEquals(found.size(), node.status().toCompletableFuture().get(30, TimeUnit.SECONDS).disk().records());
            assertEquals(List.of(), list(dir, RecordFileNames::isTemporary), "recovery deletes every temporary");
            assertFalse(Files.exists(dir.resolve(RecordFileNames.QUARANTINE_DIRECTORY)), "nothing is quarantined");
            int restored = restore(node, device, committed, fresh);
            assertEquals(fresh.size(), restored, "every record committed before this kill restores");
            return new Round(kill, delay, killedMidRun, found.size(), fresh.size(), temporaries, recovered, restored);
        }
    }

    /** Restores every chain holding a record of {@code keys} on a node started on {@code dir}; records restored. */
    private int restoreAll(Path dir, Map<RecordKey, RecordSpec> committed, Set<RecordKey> keys) throws Exception {
        try (SimulatedDevice device = SimulatedDevice.create(); SeleneCache node = start(dir, device)) {
            assertEquals(committed.size(), node.counters().get("disk.recovered"));
            return restore(node, device, committed, keys);
        }
    }

    private static SeleneCache start(Path dir, SimulatedDevice device) {
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 0).withConcurrency(CONCURRENCY)
                .withDisk(dir.toString(), DISK_BYTES);
        return SeleneCache.start(config, device);
    }

    /**
     * Restores each conversation (root-to-leaf chain of committed records) that holds a record of {@code keys}
     * and checks every restored byte; returns how many records of {@code keys} were restored byte-identically.
     */
    private static int restore(SeleneCache node, SimulatedDevice device, Map<RecordKey, RecordSpec> committed,
                               Set<RecordKey> keys) throws Exception {
        Set<RecordKey> parents = new HashSet<>();
        for (RecordSpec s : committed.values()) {
            if (s.parent() != null) {
                parents.add(s.parent());
            }
        }
        int restored = 0;
        for (RecordKey key : keys) {
            if (parents.contains(key)) {
                continue;
            }
            List<RecordSpec> chain = chainOf(key, committed);
            restored += restoreChain(node, device, chain);
        }
        return restored;
    }

    /** The committed records from the root to {@code leaf}; fails when an ancestor has no file. */
    private static List<RecordSpec> chainOf(RecordKey leaf, Map<RecordKey, RecordSpec> committed) {
        List<RecordSpec> chain = new ArrayList<>();
        for (RecordKey k = leaf; k != null; ) {
            RecordSpec s = committed.get(k);
            assertNotNull(s, "record " + leaf + " was committed before its ancestor " + k);
            chain.addFirst(s);
            k = s.parent();
        }
        assertTrue(chain.size() <= RECORDS_PER_CONVERSATION, "chain longer than a conversation: " + chain);
        return chain;
    }

    /** Restores one chain into fresh device memory; the records restored byte-identically. */
    private static int restoreChain(SeleneCache node, SimulatedDevice device, List<RecordSpec> chain)
            throws Exception {
        long[] hashes = chain.stream().mapToLong(s -> s.key().hash()).toArray();
        List<DevicePlacement> targets = new ArrayList<>();
        long[] bases = new long[chain.size()];
        try {
            for (int i = 0; i < chain.size(); i++) {
                assertTrue(chain.get(i).hasRow(), "every burst record here has a row: " + chain.get(i));
                bases[i] = device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true));
                targets.add(DevicePlacement.contiguous(LAYOUT, bases[i], true));
            }
            RestoreResult r = node.restore(chain.getFirst().key().namespace(), hashes, targets, Duration.ofHours(1))
                    .toCompletableFuture().get(RESTORE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(RestoreResult.Outcome.RESTORED, r.outcome(), r.detail());
            assertEquals(chain.size(), r.records(), "the whole committed chain restores: " + chain.getLast().key());
            int ok = 0;
            for (int i = 0; i < chain.size(); i++) {
                assertTrue(KeyedContent.verifyRecord(device, LAYOUT, targets.get(i), chain.get(i).key(), true),
                        "record " + chain.get(i).key() + " restored with different bytes");
                ok++;
            }
            return ok;
        } finally {
            for (long b : bases) {
                if (b != 0) {
                    device.freeDevice(b);
                }
            }
        }
    }

    private static Map<RecordKey, RecordSpec> headers(List<Path> recordFiles) throws IOException {
        DirectRecordIo io = DirectRecordIo.sequential();
        Map<RecordKey, RecordSpec> specs = new HashMap<>();
        for (Path f : recordFiles) {
            RecordSpec s = io.readHeader(f).spec();
            assertEquals(RecordFileNames.keyOf(f).orElseThrow(), s.key(), "file name and header disagree: " + f);
            specs.put(s.key(), s);
        }
        return specs;
    }

    private static List<Path> list(Path dir, Predicate<Path> which) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(which).toList();
        }
    }

    /** The test JVM's classpath (surefire's real one when it runs from a manifest-only jar). */
    private static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

    /**
     * Starts {@code selene burst --preset disk-only} on {@code dir} in a child JVM, collecting its standard error
     * (its log and, without a console, one progress line at the end of each phase).
     */
    private static Process startBurst(Path dir, long burstSeed, List<String> err) throws IOException {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx512m",
                "-Dlogback.configurationFile=logback.xml", "-cp", classpath(), "dev.selene.node.cli.SeleneMain",
                "burst", "--preset", "disk-only", "--disk-dir", dir.toString(), "--keep-disk",
                "--disk-size", DISK_SIZE, "--layout", LAYOUT.name(), "--conversations", Integer.toString(CONVERSATIONS),
                "--concurrency", Integer.toString(CONCURRENCY),
                "--tokens", Integer.toString(RECORDS_PER_CONVERSATION * LAYOUT.tokensPerRecord()),
                "--turns", Integer.toString(RECORDS_PER_CONVERSATION), "--device", "simulated",
                "--seed", Long.toString(burstSeed), "--no-warmup", "--verbose");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("SELENE_LOG_LEVEL", "INFO");
        Process p = pb.start();
        Thread.ofPlatform().daemon().name("crash-child-stderr").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(),
                    StandardCharsets.UTF_8))) {
                for (String l = r.readLine(); l != null; l = r.readLine()) {
                    err.add(l);
                }
            } catch (IOException e) {
                // the child died
            }
        });
        return p;
    }

    /** Waits until the child prints a line {@code pattern} finds and returns the match. */
    private static Matcher await(Process child, List<String> err, Pattern pattern) throws InterruptedException {
        long deadline = System.nanoTime() + CHILD_START_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            for (String l : err) {
                Matcher m = pattern.matcher(l);
                if (m.find()) {
                    return m;
                }
            }
            if (!child.isAlive()) {
                fail("the child exited (" + child.exitValue() + ") before printing '" + pattern + "': "
                        + String.join("\n", err));
            }
            Thread.sleep(5);
        }
        return fail("the child did not print '" + pattern + "' within " + CHILD_START_TIMEOUT + ": "
                + String.join("\n", err));
    }

    /** Ends the child by its process id (SIGKILL) and waits for it, whatever happened before. */
    private static void end(Process child) throws InterruptedException {
        ProcessHandle.of(child.pid()).ifPresent(ProcessHandle::destroyForcibly);
        child.waitFor(30, TimeUnit.SECONDS);
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
