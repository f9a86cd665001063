package dev.selene.node.manager;

import com.fasterxml.jackson.databind.JsonNode;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.pool.ManagerConfig;
import dev.selene.actors.pool.PoolDirectory;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.node.workload.Conversations;
import dev.selene.node.workload.ProbeTally;
import dev.selene.node.workload.RestoreProbe;
import dev.selene.node.workload.WorkloadSettings;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.selene.node.manager.SeleneProcess.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * #23: a manager fails under a served workload, everything a real process: two {@code selene manager}s (two
 * replicas) and a pool host, {@code selene serve --workload burst:N}, whose small warm tier retires most of what each
 * burst publishes to the pool (16 conversations of 1,536 tokens: 768 records, about 36 MiB, through an 8 MiB warm
 * tier; half the default length, so that each burst takes a few seconds) and whose probe restores and verifies every
 * conversation. As soon as the second burst has ended (the first warms the JVMs; the second is the baseline), one
 * manager is killed (SIGKILL) or stopped (SIGSTOP for 15 s, then resumed): the one that does not run the workload
 * namespace's directory entity, or the one that does. The host's live counters are watched every 100 ms throughout.
 * Each fault asserts: no restore failed after it (the survivor holds a replica of every record), a retirement
 * completed within 2 s of it (never waiting for the cluster to down the manager), the bursts after it abandon no more
 * than the baseline and restore every conversation in full, every burst from the fault on verified every restored
 * byte, and, at the end, every conversation of the bursts before and during the fault restores in full from the pool
 * into another host (in this JVM) that never held it, every byte verified.
 */
class ServedWorkloadFailoverProcessTest {

    private static final Duration START = Duration.ofSeconds(90);
    /** The workload's namespace (the burst's). */
    private static final String NAMESPACE = "burst";
    private static final int BURSTS = 4;
    /**
     * The bursts before the fault: the first warms the JVMs (a cold host's retirements may fall behind an 8 MiB warm
     * tier and abandon publications while the JIT compiles), the second is the baseline.
     */
    private static final int BEFORE = 2;
    /** How long a stopped manager stays stopped. */
    private static final Duration STOPPED = Duration.ofSeconds(15);
    /**
     * The bound on any standstill of retirements while publications are in flight: a few fail-over deadlines (500 ms
     * each) on a loaded 2-core machine, far below the cluster's downing of a dead member (10 s and more).
     */
    private static final Duration STILL_BOUND = Duration.ofSeconds(5);
    /** The bound on the first retirement after the fault (issue 23: retirements resume within 2 s of it). */
    private static final Duration RESUME_BOUND = Duration.ofSeconds(2);
    private static final Duration BURSTS_DONE = Duration.ofSeconds(180);
    private static final Pattern DONE = Pattern.compile("selene serve: burst (\\d+)/\\d+ done .*verdict: (.*)$");
    private static final Pattern ABANDONED = Pattern.compile("(\\d+) of \\d+ publications abandoned");
    private static final Pattern RESTORED = Pattern.compile("(\\d+)/(\\d+) conversations restored in full");
    /** The served workload's shape, as the host is started with it ({@code --seed}, {@code --turns} defaults). */
    private static final int CONVERSATIONS = 16;
    private static final int TOKENS = 1536;
    private static final int TURNS = 2;
    private static final long SEED = 42;

    private final List<SeleneProcess> processes = new ArrayList<>();

    private enum Fault {
        KILL_THE_OTHER, KILL_THE_DIRECTORYS, STOP_THE_DIRECTORYS
    }

    private final SimulatedDevice device = SimulatedDevice.create();
    private SeleneCache reader;

    @AfterEach
    void stop() {
        try {
            if (reader != null) {
                reader.close(); // before the processes: leaving a cluster whose members are gone takes longer
            }
        } finally {
            processes.forEach(SeleneProcess::close);
            device.close();
        }
    }

    private SeleneProcess started(SeleneProcess p) {
        processes.add(p);
        return p;
    }

    /** One burst's verdict, as {@code selene serve} announced it. */
    private record Verdict(int burst, long abandoned, int restoredInFull, int conversations, boolean verified,
                           String line) {
        static Verdict of(int burst, String verdict) {
            Matcher a = ABANDONED.matcher(verdict);
            Matcher r = RESTORED.matcher(verdict);
            assertTrue(r.find(), "a verdict names the conversations restored: " + verdict);
            return new Verdict(burst, a.find() ? Long.parseLong(a.group(1)) : 0, Integer.parseInt(r.group(1)),
                    Integer.parseInt(r.group(2)), verdict.contains("every restored byte verified"), verdict);
        }
    }

    private static List<Verdict> verdicts(SeleneProcess host) {
        List<Verdict> out = new ArrayList<>();
        for (String l : host.lines()) {
            Matcher m = DONE.matcher(l);
            if (m.find()) {
                out.add(Verdict.of(Integer.parseInt(m.group(1)), m.group(2)));
            }
        }
        return out;
    }

    /** The host's live counters at one moment ({@code /status}). */
    private record Sample(long at, long retired, long restoreFailed, long readFailures, int publishing) {
    }

    /** Reads the host's counters every 100 ms on a thread of its own until stopped. */
    private static final class Watch implements AutoCloseable {
        private final List<Sample> samples = new CopyOnWriteArrayList<>();
        private final Thread thread;
        private volatile boolean running = true;

        Watch(SeleneProcess host) {
            thread = Thread.ofPlatform().daemon().name("served-watch").start(() -> {
                while (running) {
                    try {
                        JsonNode status = host.status();
                        JsonNode c = status.path("counters");
                        samples.add(new Sample(System.nanoTime(), c.path("pool.retired").asLong(),
                                c.path("restore.failed").asLong(), c.path("pool.read.failures").asLong(),
                                status.at("/intake/inFlight").asInt()));
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        // A status request that failed under load: the next one is 100 ms later.
                    }
                }
            });
        }

        Sample last() {
            return samples.getLast();
        }

        /** The first sample taken at or after {@code nanos}. */
        Sample at(long nanos) {
            return samples.stream().filter(s -> s.at() - nanos >= 0).findFirst().orElseThrow();
        }

        /**
         * The longest time in [from, to] in which the retired count did not grow (as sampled), over the samples
         * {@code counted} accepts: a sample it rejects ends a standstill, and the next one it accepts starts one.
         */
        long longestStill(long from, long to, java.util.function.Predicate<Sample> counted) {
            long longest = 0;
            long since = -1;
            long count = -1;
            for (Sample s : samples) {
                if (s.at() - from < 0) {
                    count = s.retired();
                    continue;
                }
                if (s.at() - to > 0) {
                    break;
                }
                if (!counted.test(s)) {
                    since = -1;
                } else if (since < 0 || (count >= 0 && s.retired() > count)) {
                    since = s.at();
                }
                count = s.retired();
                if (since >= 0) {
                    longest = Math.max(longest, s.at() - since);
                }
            }
            return longest;
        }

        /** Nanoseconds from {@code nanos} to the first sample with more records retired than at it; -1 if none. */
        long firstRetiredAfter(long nanos) {
            long base = at(nanos).retired();
            return samples.stream().filter(s -> s.at() - nanos >= 0 && s.retired() > base).findFirst()
                    .map(s -> s.at() - nanos).orElse(-1L);
        }

        /** Records retired in each second from {@code nanos} on, as sampled (for the report). */
        List<Long> perSecond(long nanos) {
            List<Long> out = new ArrayList<>();
            long base = at(nanos).retired();
            for (long t = nanos + 1_000_000_000L; t - last().at() <= 0; t += 1_000_000_000L) {
                long now = at(t).retired();
                out.add(now - base);
                base = now;
            }
            return out;
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(5_000);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Fault.class)
    void aManagerFailsUnderAServedWorkload_noRestoreFails_retirementsGoOn_theNextBurstsAbandonNoMore_verified(
            Fault fault, @TempDir Path tmp) throws Exception {
        List<Integer> ports = SeleneProcess.freePorts(2);
        // The second manager starts at once and joins the first (its seed) once that is up.
        SeleneProcess first = started(SeleneProcess.manager(tmp, "manager-1", ports.get(0), ports.get(0), "256m"));
        SeleneProcess second = started(SeleneProcess.manager(tmp, "manager-2", ports.get(1), ports.get(0), "256m"));
        first.awaitReady(START);
        second.awaitReady(START);
        awaitTrue(START, "both managers members", () -> first.members() == 2);
        SeleneProcess host = started(SeleneProcess.start(tmp, "host", "serve", "--layout", "small", "--warm", "8m",
                "--device", "simulated", "--pool-managers", "127.0.0.1:" + ports.get(0), "--admin-port", "0",
                "--log-file", tmp.resolve("host-node.log").toString(), "--workload", "burst:" + BURSTS,
                "--conversations", String.valueOf(CONVERSATIONS), "--tokens", String.valueOf(TOKENS)));
        // Another pool host, in this JVM, that never holds the workload's records: it reads them back at the end.
        reader = SeleneCache.start(CacheConfig.memoryOnly(Layout.small(), 8L << 20).withConcurrency(4)
                .withPool(List.of("127.0.0.1:" + ports.get(0), "127.0.0.1:" + ports.get(1)))
                .withDrainOnShutdown(false), device);
        host.awaitReady(START);

        String entity = PoolDirectory.entityId(NAMESPACE, ManagerConfig.DEFAULT_DIRECTORY_SHARDS);
        long faultAt;
        SeleneProcess victim;
        try (Watch watch = new Watch(host)) {
            awaitTrue(START, "burst " + BEFORE + " done", () -> verdicts(host).size() >= BEFORE);
            SeleneProcess directory = runs(first, entity) ? first : runs(second, entity) ? second : null;
            assertTrue(directory != null, "a manager runs " + entity + " after " + BEFORE + " bursts");
            victim = fault == Fault.KILL_THE_OTHER ? (directory == first ? second : first) : directory;
            faultAt = System.nanoTime();
            victim.signal(fault == Fault.STOP_THE_DIRECTORYS ? "STOP" : "KILL");
            if (fault == Fault.STOP_THE_DIRECTORYS) {
                Thread.sleep(STOPPED.toMillis());
                victim.signal("CONT");
            }
            awaitTrue(BURSTS_DONE, "every burst done", () -> verdicts(host).size() == BURSTS
                    || !host.process().isAlive());
            Sample before = watch.at(faultAt);
            Sample end = watch.last();
            long still = watch.longestStill(faultAt, faultAt + STILL_BOUND.toNanos() * 2, sample -> true);
            long resumed = watch.firstRetiredAfter(faultAt);
            // While publications are in flight the host needs retirements to free slots, so a standstill there is
            // retirement waiting (on a failed manager), not a phase with nothing to retire (a burst's probe).
            long stillPublishing = watch.longestStill(faultAt, end.at(), sample -> sample.publishing() > 0);
            System.out.println("[served " + fault + "] retired per second from the fault on: " + watch.perSecond(faultAt));
            List<Verdict> v = verdicts(host);
            v.forEach(x -> System.out.println("[served " + fault + "] burst " + x.burst() + (x.burst() == BEFORE + 1
                    ? " (" + victim.name() + (fault == Fault.STOP_THE_DIRECTORYS ? " stopped" : " killed")
                    + " as it began)" : "") + ": " + x.line()));
            System.out.println("[served " + fault + "] " + victim.name() + (victim == directory ? " runs " : " does not"
                    + " run ") + entity + "; the first retirement after the fault completed " + (resumed < 0 ? "never"
                    : TimeUnit.NANOSECONDS.toMillis(resumed) + " ms") + " after it; retirements stood still at most "
                    + TimeUnit.NANOSECONDS.toMillis(still) + " ms in the " + STILL_BOUND.toSeconds() * 2
                    + " s after it, at most " + TimeUnit.NANOSECONDS.toMillis(stillPublishing) + " ms while "
                    + "publications were in flight (fault to end); from the fault to the end: "
                    + (end.retired() - before.retired())
                    + " records retired, " + (end.restoreFailed() - before.restoreFailed()) + " restores failed, "
                    + (end.readFailures() - before.readFailures()) + " pool read failures");

            assertEquals(BURSTS, v.size(), "every burst ended: " + host.tail(30));
            assertEquals(0, end.restoreFailed() - before.restoreFailed(), "no restore failed after the fault");
            // Retirements go on after the fault, and never stand still while publications wait for the slots they
            // free for longer than a few fail-over deadlines (the cluster would take 10 s and more to down the
            // manager). A standstill with nothing in flight (a burst's probe, the end of the run) is reported only.
            assertTrue(resumed >= 0 && resumed < RESUME_BOUND.toNanos(), "retirements went on within "
                    + RESUME_BOUND.toSeconds() + " s of the fault: the first after "
                    + (resumed < 0 ? "never" : TimeUnit.NANOSECONDS.toMillis(resumed) + " ms"));
            assertTrue(stillPublishing < STILL_BOUND.toNanos(), "retirements stood still "
                    + TimeUnit.NANOSECONDS.toMillis(stillPublishing) + " ms while publications were in flight");
        }
        List<Verdict> v = verdicts(host);
        Verdict baseline = v.get(BEFORE - 1);
        for (Verdict after : v.subList(BEFORE, BURSTS)) {
            assertTrue(after.verified(), "burst " + after.burst() + " verified every restored byte: " + after.line());
        }
        // The burst that ran as the manager failed may see its transfers fail over; the ones after it run on the
        // survivor alone (or on both again, after a stop), while the cluster downs the dead manager and after.
        for (Verdict next : v.subList(BEFORE + 1, BURSTS)) {
            assertTrue(next.abandoned() <= baseline.abandoned(), "burst " + next.burst() + " abandoned "
                    + next.abandoned() + ", the burst before the fault " + baseline.abandoned() + ": " + next.line());
            assertEquals(next.conversations(), next.restoredInFull(), "burst " + next.burst()
                    + " restored every conversation in full: " + next.line());
        }
        committedBeforeAndDuringTheFault_restoresFromThePoolIntoAnotherHost(fault, v);
    }

    /**
     * What the bursts before and during the fault kept was retired to the pool (the host's 8 MiB warm tier holds a
     * fraction of one burst): each conversation its own burst restored in full restores in full again, every byte
     * verified, from the pool alone, into another host that never held it, at once (the failed manager may still be
     * a member, unreachable: a dead directory entity's lookups go to the surviving store). A burst that abandoned a
     * publication (the first may, while the JIT compiles) did not restore that conversation in full either.
     */
    private void committedBeforeAndDuringTheFault_restoresFromThePoolIntoAnotherHost(Fault fault, List<Verdict> v)
            throws Exception {
        for (int run = 0; run <= BEFORE; run++) {
            Conversations burst = Conversations.generate(new WorkloadSettings(Layout.small(), CONVERSATIONS, 4,
                    TOKENS, TURNS, 2_000, SEED + run, false));
            ProbeTally t = RestoreProbe.run(reader, device, burst, System.out, "check");
            System.out.println("[served " + fault + "] burst " + (run + 1) + " restored afterwards from the pool by "
                    + "another host: " + t.full() + "/" + CONVERSATIONS + " in full, " + t.fromPool()
                    + " records from the pool, " + t.verifiedRecords() + " verified, " + t.mismatchedRecords()
                    + " mismatched, " + t.notRestored() + " not restored, in " + Math.round(t.seconds() * 1000)
                    + " ms");
            int own = v.get(run).restoredInFull();
            assertTrue(t.full() >= own, "burst " + (run + 1) + ": every conversation its probe restored in full ("
                    + own + ") in full again: " + t);
            assertEquals(0, t.mismatchedRecords(), "burst " + (run + 1) + ": every byte as published " + t);
            assertEquals(t.verifiedRecords(), t.fromPool(), "burst " + (run + 1) + ": all from the pool " + t);
        }
    }

    private static boolean runs(SeleneProcess manager, String entity) throws Exception {
        for (JsonNode e : manager.status().at("/directory/entities")) {
            if (e.asText().equals(entity)) {
                return true;
            }
        }
        return false;
    }
}
