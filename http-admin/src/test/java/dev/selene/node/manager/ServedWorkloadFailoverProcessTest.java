package dev.selene.node.manager;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.selene.node.manager.SeleneProcess.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * #23: a manager killed (SIGKILL) under a served workload, everything a real process: two {@code selene manager}s
 * (two replicas) and a pool host, {@code selene serve --workload burst:N}, whose small warm tier retires most of what
 * each burst publishes to the pool and whose probe restores and verifies every conversation. The second manager is
 * killed as soon as the second burst has ended (the first is the cold JVM's), so the third runs while the cluster
 * has not yet downed it. The bursts after the fault keep every publication the burst before it kept (they abandon
 * no more), restore every conversation in full from the survivor's replicas and verify every byte.
 */
class ServedWorkloadFailoverProcessTest {

    private static final Duration START = Duration.ofSeconds(90);
    private static final int BURSTS = 5;
    /** The bursts before the fault: the first warms the JVMs, the second is the baseline. */
    private static final int BEFORE = 2;
    private static final Duration BURSTS_DONE = Duration.ofSeconds(180);
    private static final Pattern DONE = Pattern.compile("selene serve: burst (\\d+)/\\d+ done .*verdict: (.*)$");
    private static final Pattern ABANDONED = Pattern.compile("(\\d+) of \\d+ publications abandoned");
    private static final Pattern RESTORED = Pattern.compile("(\\d+)/(\\d+) conversations restored in full");

    private final List<SeleneProcess> processes = new ArrayList<>();

    @AfterEach
    void stop() {
        processes.forEach(SeleneProcess::close);
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

    @Test
    void aManagerKilledUnderAServedWorkload_theNextBurstsAbandonNoMore_restoreEveryConversation_verified(
            @TempDir Path tmp) throws Exception {
        List<Integer> ports = SeleneProcess.freePorts(2);
        SeleneProcess first = started(SeleneProcess.manager(tmp, "manager-1", ports.get(0), ports.get(0), "256m"))
                .awaitReady(START);
        SeleneProcess second = started(SeleneProcess.manager(tmp, "manager-2", ports.get(1), ports.get(0), "256m"))
                .awaitReady(START);
        awaitTrue(START, "both managers members", () -> first.members() == 2);
        SeleneProcess host = started(SeleneProcess.start(tmp, "host", "serve", "--layout", "small", "--warm", "8m",
                "--device", "simulated", "--pool-managers", "127.0.0.1:" + ports.get(0), "--admin-port", "0",
                "--log-file", tmp.resolve("host-node.log").toString(), "--workload", "burst:" + BURSTS,
                "--conversations", "16"));

        awaitTrue(START, "burst " + BEFORE + " done", () -> verdicts(host).size() >= BEFORE);
        second.signal("KILL");
        awaitTrue(BURSTS_DONE, "every burst done", () -> verdicts(host).size() == BURSTS
                || !host.process().isAlive());
        List<Verdict> v = verdicts(host);
        v.forEach(x -> System.out.println("[served failover] burst " + x.burst() + (x.burst() == BEFORE + 1
                ? " (manager-2 killed as it began)" : "") + ": " + x.line()));
        assertEquals(BURSTS, v.size(), "every burst ended: " + host.tail(30));
        Verdict baseline = v.get(BEFORE - 1);
        for (Verdict after : v.subList(BEFORE, BURSTS)) {
            assertTrue(after.verified(), "burst " + after.burst() + " verified every restored byte: " + after.line());
        }
        // The burst that ran while the manager died may see its transfers fail over; the ones after it run on the
        // survivor alone, while the cluster downs the dead manager and after.
        for (Verdict next : v.subList(BEFORE + 1, BURSTS)) {
            assertTrue(next.abandoned() <= baseline.abandoned(), "burst " + next.burst() + " abandoned "
                    + next.abandoned() + ", the burst before the fault " + baseline.abandoned() + ": " + next.line());
            assertEquals(next.conversations(), next.restoredInFull(), "burst " + next.burst()
                    + " restored every conversation in full: " + next.line());
        }
    }
}
