package dev.selene.actors.pool;

import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.trace.TraceEvent;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.pool.LoopbackPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import static dev.selene.actors.pool.KeyedChains.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pool managers and hosts in JVMs of their own on loopback, killed with SIGKILL in the middle of their work: what
 * the pool promises survives a kill (a retired record is never lost with one manager, no restore returns wrong
 * bytes, a partial record is never held, replicas are rebuilt) and hosts and managers start in any order. Each test
 * starts its own children ({@link ManagerProcess}, {@link HostProcess}) and kills them; their logs are under
 * {@code target/pool-kill-logs/<pid of the test JVM>}, and each test prints its timeline ({@code [test +ms] ...}).
 * A manager stopped (SIGSTOP) under load is the pool availability process test's.
 */
class PoolKillTest {

    private static final String NS = "kill";
    private static final int CHAIN = 3;
    private static final int REPLICAS = 2;
    private static final int STORE_SLOTS = 4096;
    /**
     * Records published at most before the kill, and after it: together well below what one store holds (4096 slots,
     * 5 a record), so that the survivor never evicts a record the test expects back, however fast the publisher or
     * however long the cluster takes to settle.
     */
    private static final int PUBLISH_LIMIT = 300;
    /** Children's logs, per test JVM (two builds of the same tree may run at once). */
    private static final Path LOGS = Path.of("target", "pool-kill-logs",
            String.valueOf(ProcessHandle.current().pid()));
    /** From a child JVM's start to its ready line, on a slow machine. */
    private static final Duration CHILD_START = Duration.ofSeconds(60);
    /** How long a pool host waits at start for a manager (the host cache's pool join timeout). */
    private static final Duration HOST_JOIN_TIMEOUT = Duration.ofSeconds(20);
    /** The join timeout of the host no manager ever answers ({@code selene.pool.join-timeout}): the test waits it out. */
    private static final Duration UNREACHABLE_JOIN_TIMEOUT = Duration.ofSeconds(5);
    /**
     * Time for a killed member to be downed and its directory shards to move: the failure detector's pause (3 s),
     * the split-brain resolver's stable-after (5 s), the removal margin (5 s), and slack for a slow machine.
     */
    private static final Duration CLUSTER_SETTLES = Duration.ofSeconds(45);
    private static final Duration REQUEST = Duration.ofSeconds(15);

    private final SimulatedDevice device = SimulatedDevice.create();
    private final List<ChildJvm> children = new CopyOnWriteArrayList<>();
    private final List<SeleneCache> hosts = new CopyOnWriteArrayList<>();
    /** Hosts started in the background (each start blocks until the host is up or has failed). */
    private final ExecutorService starts = Executors.newCachedThreadPool();
    private String test;
    private long testStartedAt;

    @BeforeEach
    void name(TestInfo info) {
        test = info.getTestMethod().orElseThrow().getName();
        testStartedAt = System.nanoTime();
    }

    @AfterEach
    void stop() {
        report("stopping");
        List<String> violations = new ArrayList<>();
        try {
            // Hosts first (together), while the managers still answer: a member that leaves a live cluster is gone
            // at once.
            List<CompletableFuture<Void>> closing = new ArrayList<>();
            for (SeleneCache h : hosts) {
                closing.add(CompletableFuture.runAsync(h::close, starts).exceptionally(e -> {
                    report("a host did not stop cleanly: " + e.getMessage());
                    return null;
                }));
            }
            CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            violations.addAll(storeInvariantViolations());
        } catch (Exception e) {
            report("the hosts did not stop within 60 s: " + e);
        } finally {
            children.forEach(ChildJvm::close);
            starts.shutdownNow();
            device.close();
        }
        report("stopped");
        assertEquals(List.of(), violations, "store invariants of the managers alive after the test");
    }

    /** The broken store invariants of every manager still alive, each named with its manager. */
    private List<String> storeInvariantViolations() {
        List<String> out = new ArrayList<>();
        for (ChildJvm c : children) {
            if (!c.name().contains("-manager") || !c.isAlive()) {
                continue;
            }
            try {
                Map<String, String> answer = c.request("invariants", REQUEST);
                if (answer.containsKey("stopped")) {
                    report(c.name() + " shut itself down (downed by the cluster): no store to check");
                    continue;
                }
                String v = answer.getOrDefault("violation", "no answer: " + answer);
                if (!v.isEmpty()) {
                    out.add(c.name() + ": " + v.replace('_', ' '));
                }
            } catch (Exception e) {
                out.add(c.name() + " did not answer the invariant check: " + e.getMessage());
            }
        }
        return out;
    }

    // ---- scenarios ----

    @Test
    void aManagerKilledMidTransfer_losesNoRetiredRecordNorServesWrongBytes_andRestartedOnItsPortGetsItsReplicasBack()
            throws Exception {
        List<Integer> ports = freePorts(2);
        List<ChildJvm> managers = startManagers(ports);
        List<String> pool = addresses(ports);
        CompletableFuture<SeleneCache> restorerStart = CompletableFuture.supplyAsync(() -> host(pool), starts);
        SeleneCache publisher = host(pool);
        SeleneCache restorer = restorerStart.get(CHILD_START.toSeconds(), TimeUnit.SECONDS);
        // The premise is two replicas of every retirement: both hosts see both managers' stores before the first.
        // (A host that joined a moment ago may see one only, retire to it alone until the directory copies the record,
        // and lose it with that manager; that window is not what this test is about.)
        for (SeleneCache h : List.of(publisher, restorer)) {
            awaitTrue(Duration.ofSeconds(20), "a host sees both managers' stores",
                    () -> PoolBaseline.stores(h.system()).size() == 2);
        }

        Publishing publishing = new Publishing(publisher, 1_000);
        RecordSpec interrupted = new RecordSpec(new RecordKey(NS, 1_900_000), null, true);
        Restoring restoring = new Restoring(restorer, publishing);
        publishing.start();
        restoring.start();
        Set<RecordKey> retiredBeforeKill;
        long killedAt;
        int victimIndex;
        try {
            awaitTrue(Duration.ofSeconds(60), "6 records retired before the kill",
                    () -> publishing.retired().size() >= 6);
            // The victim is the manager that does not run the namespace's directory entity, so that retirements go
            // on being placed on it. So that a retirement is surely in flight to it when it is killed (offered, not
            // answered), the publisher pauses and drains (its records become clean: room for one more), the victim
            // is stopped (SIGSTOP), and a new root record is published and drained; then the victim is killed.
            victimIndex = managers.getFirst().request("entities", REQUEST).get("entities")
                    .contains(PoolDirectory.entityId(NS, ManagerConfig.DEFAULT_DIRECTORY_SHARDS)) ? 1 : 0;
            ChildJvm victim = managers.get(victimIndex);
            publishing.pause();
            report("drained before the kill: " + await(publisher.drain(Duration.ofSeconds(20)),
                    Duration.ofSeconds(30)));
            victim.freeze();
            PublishOutcome published = KeyedChains.publish(publisher, device, interrupted);
            assertInstanceOf(PublishResult.Stored.class, published.result(), "published " + interrupted.key());
            DrainReport drained = await(publisher.drain(Duration.ofSeconds(2)), Duration.ofSeconds(30));
            report("drained while " + victim.name() + " is stopped: " + drained + "; retirements in flight: "
                    + publishing.retiring() + KeyedChains.traces(publisher, List.of(interrupted)));
            retiredBeforeKill = publishing.retired();
            killedAt = System.nanoTime();
            report("killing " + victim + " with " + retiredBeforeKill.size() + " records retired, "
                    + publishing.published().size() + " published");
            victim.kill();
            publishing.resume();

            Check settled = () -> {
                List<String> unstored = publishing.unstoredAfter(killedAt);
                if (!unstored.isEmpty()) {
                    throw new AssertionError("publications after the kill not stored: " + unstored + "; "
                            + publishing.diagnosis(killedAt) + KeyedChains.traces(publisher, List.of(interrupted)));
                }
                return publishing.chainsRetiredWholeAfter(killedAt) >= 2
                        && KeyedChains.retired(publisher, interrupted.key());
            };
            awaitTrue(CLUSTER_SETTLES, "the record offered to the killed manager retired (to the other) and two "
                    + "chains published after the kill retired whole", settled, () -> publishing.diagnosis(killedAt)
                    + KeyedChains.traces(publisher, List.of(interrupted)));
            report("two chains retired whole " + millisSince(killedAt) + " ms after the kill; retire failures "
                    + publisher.counters().get("pool.retire.failures"));
        } finally {
            publishing.stop();
            restoring.stop();
        }
        report(restoring + "; " + publishing.published().size() + " published; retirements failed (seconds after "
                + "the kill): " + publishing.retireFailures(killedAt));
        restoring.assertNoFailure();
        assertEquals(List.of(), restoring.wrongBytes(), "no restore served wrong bytes");
        assertTrue(restoring.restored() > 0, "restores ran throughout: " + restoring);
        Set<RecordKey> retired = new HashSet<>(publishing.retired());
        assertTrue(retired.containsAll(retiredBeforeKill), "a retired record stays retired");
        KeyedChains.Restore interruptedRestore = KeyedChains.restore(restorer, device, List.of(interrupted));
        assertTrue(interruptedRestore.wholeFromPool(1), "the record offered to the killed manager restored from "
                + "the other: " + interruptedRestore + KeyedChains.traces(restorer, List.of(interrupted)));
        retired.add(interrupted.key());
        // The other host holds none of them: every record comes from the surviving manager.
        for (List<RecordSpec> prefix : publishing.retiredPrefixes(retired)) {
            KeyedChains.Restore r = KeyedChains.restore(restorer, device, prefix);
            assertTrue(r.wholeFromPool(prefix.size()), "chain up to " + prefix.getLast().key()
                    + " restored whole from the pool, byte-identically: " + r
                    + (retiredBeforeKill.contains(prefix.getLast().key()) ? " (retired before the kill)" : "")
                    + "; survivor " + status(survivorOf(managers, victimIndex)) + "; restorer " + memory(restorer)
                    + KeyedChains.traces(restorer, prefix));
        }

        // Restarted on its port (when it is the first seed, it must join the other rather than start a cluster of
        // its own), the killed manager gets a replica of every record back: those it lost and those retired while
        // it was down.
        long restartedAt = System.nanoTime();
        ChildJvm restarted = startManager(victimIndex, ports.get(victimIndex), pool, "-restarted");
        String address = readyAddress(restarted);
        report("restarted manager up " + millisSince(restartedAt) + " ms after its start");
        // PoolManagerNode.address() is the system's host-port: system@host:port.
        assertEquals(PoolCluster.SYSTEM_NAME + "@" + pool.get(victimIndex), address,
                "restarted on its port, an up member again");
        ChildJvm survivor = survivorOf(managers, victimIndex);
        awaitTrue(CLUSTER_SETTLES, "the survivor's records copied to the restarted manager",
                () -> records(restarted) == records(survivor));
        report("every record copied back " + millisSince(restartedAt) + " ms after the restart");
        Map<Long, Long> listed = listing(survivor);
        assertEquals(listed, listing(restarted), "both managers hold the same records");
        for (RecordKey k : retired) {
            assertTrue(listed.containsKey(k.hash()), "retired " + k + " held by both managers");
        }
    }

    @Test
    void aHostKilledMidRetire_leavesNoPartialRecord_andEveryRecordThePoolListsRestoresByteIdentically()
            throws Exception {
        List<Integer> ports = freePorts(2);
        List<ChildJvm> managers = startManagers(ports);
        List<String> pool = addresses(ports);
        long base = 2_000;
        ChildJvm dying = ChildJvm.start(test + "-host", HostProcess.class, LOGS,
                List.of(String.join(",", pool), NS, String.valueOf(base), String.valueOf(CHAIN)));
        children.add(dying);
        SeleneCache survivor = host(pool); // a member before the kill: its join waits on nobody
        dying.await("ready", 0, CHILD_START);
        long startedAt = System.nanoTime();
        awaitTrue(Duration.ofSeconds(60), "6 records retired by the host to be killed",
                () -> dying.linesOf("retired").size() >= 6);
        report("6 records retired " + millisSince(startedAt) + " ms after the host's ready line");

        long stalled = 9_000_000;
        Map<String, String> stall = dying.request("stall", REQUEST, String.valueOf(stalled));
        assertEquals("2", stall.get("accepted"), "both managers take the upload to be cut: " + stall);
        for (ChildJvm m : managers) {
            awaitTrue(Duration.ofSeconds(10), m.name() + " uploading the partial record",
                    () -> uploading(m) >= 1);
        }
        Set<Long> retiredByDead = new HashSet<>();
        dying.linesOf("retired").forEach(l -> retiredByDead.add(Long.parseLong(field(l, "hash"))));
        long killedAt = System.nanoTime();
        dying.kill();

        // The partial upload sends nothing more: it is dropped within the idle timeout (or sooner, once the host's
        // node is downed), whichever of its managers' uploads ends first.
        Duration dropBound = ManagerStore.UPLOAD_IDLE_TIMEOUT.plusSeconds(8);
        for (ChildJvm m : managers) {
            awaitTrue(dropBound.minusNanos(System.nanoTime() - killedAt), m.name()
                    + " dropped the partial upload within the idle timeout", () -> uploading(m) == 0);
        }
        report("partial uploads dropped " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt)
                + " ms after the kill");

        Map<Long, Long> listed = new TreeMap<>(); // hash -> parent hash (-1 for a root), every manager's together
        for (ChildJvm m : managers) {
            Map<Long, Long> held = listing(m);
            assertEquals(records(m), held.size(), m.name() + " counts only the records it lists");
            assertFalse(held.containsKey(stalled), m.name() + " holds none of the partial record");
            assertTrue(held.keySet().containsAll(retiredByDead), m.name() + " holds every record the dead host "
                    + "retired (" + REPLICAS + " replicas of " + REPLICAS + " managers): " + retiredByDead
                    + " held: " + held.keySet());
            listed.putAll(held);
        }
        for (ChildJvm m : managers) {
            assertTrue(Long.parseLong(status(m).get("refused")) >= 1, m.name() + " counts the upload it dropped");
        }

        // A listed record's ancestors are listed too (a host retires ancestors first), so every listed record ends
        // a chain prefix another host can restore.
        for (Map.Entry<Long, Long> e : listed.entrySet()) {
            assertTrue(e.getValue() < 0 || listed.containsKey(e.getValue()), "the parent of listed record "
                    + e.getKey() + " is listed");
        }
        for (List<RecordSpec> prefix : listedPrefixes(listed, base)) {
            KeyedChains.Restore r = KeyedChains.restore(survivor, device, prefix);
            assertTrue(r.wholeFromPool(prefix.size()), "listed chain up to " + prefix.getLast().key()
                    + " restored whole, byte-identically: " + r + KeyedChains.traces(survivor, prefix));
        }
        RecordSpec partial = new RecordSpec(new RecordKey(NS, stalled), null, true);
        KeyedChains.Restore miss = KeyedChains.restore(survivor, device, List.of(partial));
        assertEquals(RestoreResult.Outcome.MISS, miss.result().outcome(),
                "the partial record is a miss: " + miss);
    }

    @Test
    void aHostStartedBeforeItsManager_waitsAndThenWorks_whileAHostWithNoManagerFailsInOneLineNamingThem()
            throws Exception {
        // Nothing ever listens on these: this host's start fails after the join timeout, meanwhile the other runs.
        List<String> nowhere = addresses(freePorts(2));
        long unreachableStartedAt = System.nanoTime();
        CompletableFuture<SeleneCache> unreachable = CompletableFuture.supplyAsync(() -> {
            SeleneCache h = SeleneCache.start(KeyedChains.hostConfig(nowhere), device, com.typesafe.config.ConfigFactory
                    .parseString("selene.pool.join-timeout = " + UNREACHABLE_JOIN_TIMEOUT.toSeconds() + "s")
                    .withFallback(dev.selene.actors.api.CacheSettings.standaloneSystemConfig()), "selene");
            hosts.add(h);
            return h;
        }, starts);
        // When it failed, not when the test got to look: the rest of the test runs meanwhile.
        AtomicLong unreachableEndedAt = new AtomicLong();
        unreachable.whenComplete((h, e) -> unreachableEndedAt.set(System.nanoTime()));

        int port = freePorts(1).getFirst();
        List<String> pool = List.of("127.0.0.1:" + port);
        Duration managerLater = Duration.ofSeconds(2);
        long hostStartedAt = System.nanoTime();
        CompletableFuture<Long> hostReady = new CompletableFuture<>();
        CompletableFuture<SeleneCache> hostStart = CompletableFuture.supplyAsync(() -> {
            SeleneCache h = host(pool);
            hostReady.complete(System.nanoTime());
            return h;
        }, starts);
        Thread.sleep(managerLater.toMillis());
        assertFalse(hostStart.isDone(), "the host waits: no manager yet");
        ChildJvm manager = ChildJvm.start(test + "-manager0", ManagerProcess.class, LOGS,
                List.of(String.valueOf(port), pool.getFirst(), String.valueOf(REPLICAS), String.valueOf(STORE_SLOTS)));
        children.add(manager);
        readyAddress(manager);
        SeleneCache host = hostStart.get(HOST_JOIN_TIMEOUT.plusSeconds(10).toSeconds(), TimeUnit.SECONDS);
        assertTrue(hostReady.get() - hostStartedAt >= managerLater.toNanos(), "the host became ready only after "
                + "the manager started");
        report("host ready " + millisSince(hostStartedAt) + " ms after its start");

        List<RecordSpec> chain = KeyedChains.chain(NS, 4_000, 0, CHAIN);
        publishAndRetire(host, chain, Duration.ofSeconds(30));
        assertEquals(CHAIN, records(manager));
        SeleneCache other = host(pool);
        KeyedChains.Restore restored = KeyedChains.restore(other, device, chain);
        assertTrue(restored.wholeFromPool(CHAIN), "restored by another host: " + restored
                + KeyedChains.traces(other, chain));

        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> unreachable.get(UNREACHABLE_JOIN_TIMEOUT.plusSeconds(10).toSeconds(), TimeUnit.SECONDS));
        Duration took = Duration.ofNanos(unreachableEndedAt.get() - unreachableStartedAt);
        report("the host with no manager failed " + took.toMillis() + " ms after its start");
        assertTrue(took.compareTo(UNREACHABLE_JOIN_TIMEOUT.plusSeconds(10)) < 0, "failed within its join timeout: "
                + took);
        Throwable e = failed.getCause();
        assertInstanceOf(IllegalStateException.class, e, "a start failure");
        String message = e.getMessage();
        assertFalse(message.contains("\n"), "one line: " + message);
        assertTrue(message.contains("within " + UNREACHABLE_JOIN_TIMEOUT.toSeconds() + " s"), "names its join timeout: "
                + message);
        for (String address : nowhere) {
            assertTrue(message.contains(address), "names " + address + ": " + message);
        }
    }

    /** A line on the test's output: what a run took, for whoever tunes the timeouts. */
    private void report(String line) {
        System.out.println("[" + test + " +" + millisSince(testStartedAt) + " ms] " + line);
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    // ---- children ----

    private static List<Integer> freePorts(int n) throws IOException {
        return LoopbackPorts.reserve(n);
    }

    private static List<String> addresses(List<Integer> ports) {
        return ports.stream().map(p -> "127.0.0.1:" + p).toList();
    }

    /**
     * Starts a manager per port (every one seeded with all of them) and waits until each is an up member. The first
     * seed goes first: a seed that asks another before the cluster exists is told to wait, and asks again only after
     * the seed node timeout (5 s).
     */
    private List<ChildJvm> startManagers(List<Integer> ports) throws Exception {
        List<String> all = addresses(ports);
        List<ChildJvm> started = new ArrayList<>();
        started.add(startManager(0, ports.getFirst(), all, ""));
        readyAddress(started.getFirst());
        for (int i = 1; i < ports.size(); i++) {
            started.add(startManager(i, ports.get(i), all, ""));
        }
        for (ChildJvm m : started) {
            readyAddress(m);
        }
        report(ports.size() + " managers up");
        return started;
    }

    private ChildJvm startManager(int index, int port, List<String> all, String suffix) throws IOException {
        ChildJvm m = ChildJvm.start(test + "-manager" + index + suffix, ManagerProcess.class, LOGS,
                List.of(String.valueOf(port), String.join(",", all), String.valueOf(REPLICAS),
                        String.valueOf(STORE_SLOTS)));
        children.add(m);
        return m;
    }

    /** Waits for a child's ready line; its address. */
    private static String readyAddress(ChildJvm m) throws InterruptedException {
        return field(m.await("ready", 0, CHILD_START), "address");
    }

    /** A host's memory, for a failure message: what holds its slots when a restore finds none to stage in. */
    private static String memory(SeleneCache host) throws Exception {
        CacheStatus s = await(host.status(), Duration.ofSeconds(10));
        return "{slots=" + s.totalSlots() + ", free=" + s.freeSlots() + ", clean=" + s.cleanSlots() + ", intake="
                + s.intakeSlots() + ", resident records=" + s.residentRecords() + ", in flight=" + s.inFlight() + "}";
    }

    private static Map<String, String> status(ChildJvm manager) throws Exception {
        Map<String, String> s = manager.request("status", REQUEST);
        if (s.containsKey("error")) {
            throw new AssertionError(manager.name() + " could not tell its status: " + s);
        }
        return s;
    }

    private static ChildJvm survivorOf(List<ChildJvm> managers, int victimIndex) {
        return managers.get(1 - victimIndex);
    }

    private static long records(ChildJvm manager) throws Exception {
        return Long.parseLong(status(manager).get("records"));
    }

    private static int uploading(ChildJvm manager) throws Exception {
        return Integer.parseInt(status(manager).get("uploading"));
    }

    /** The records of {@link #NS} a manager's store holds: hash to parent hash (-1 for a root). */
    private static Map<Long, Long> listing(ChildJvm manager) throws Exception {
        Map<String, String> l = manager.request("list", REQUEST);
        if (l.containsKey("error")) {
            throw new AssertionError(manager.name() + " could not list its records: " + l);
        }
        Map<Long, Long> out = new TreeMap<>();
        String records = l.getOrDefault("records", "");
        if (records.isEmpty()) {
            return out;
        }
        for (String r : records.split(",")) {
            String[] p = r.split(":");
            if (p[0].equals(NS)) {
                out.put(Long.parseLong(p[1]), p[2].equals("-") ? -1L : Long.parseLong(p[2]));
            }
        }
        return out;
    }

    private static String field(String line, String key) {
        for (String word : line.split(" ")) {
            if (word.startsWith(key + "=")) {
                return word.substring(key.length() + 1);
            }
        }
        throw new AssertionError("no " + key + " in '" + line + "'");
    }

    // ---- hosts in this JVM ----

    private SeleneCache host(List<String> pool) {
        SeleneCache h = SeleneCache.start(KeyedChains.hostConfig(pool), device);
        hosts.add(h);
        return h;
    }

    /** Publishes a chain and drains it, again until every record is retired or {@code patience} runs out. */
    private void publishAndRetire(SeleneCache host, List<RecordSpec> chain, Duration patience) throws Exception {
        long deadline = System.nanoTime() + patience.toNanos();
        List<String> attempts = new ArrayList<>();
        while (System.nanoTime() - deadline < 0) {
            for (RecordSpec s : chain) {
                PublishOutcome o = KeyedChains.publish(host, device, s);
                assertTrue(o.result() instanceof PublishResult.Stored || o.result() instanceof PublishResult.Present,
                        "published " + s.key() + ": " + o);
            }
            DrainReport drained = await(host.drain(Duration.ofSeconds(20)), Duration.ofSeconds(30));
            boolean all = true;
            for (RecordSpec s : chain) {
                all &= KeyedChains.retired(host, s.key());
            }
            if (all) {
                return;
            }
            attempts.add(drained.toString());
            Thread.sleep(500);
        }
        throw new AssertionError("chain from " + chain.getFirst().key() + " not retired within " + patience.toSeconds()
                + " s; drains: " + attempts);
    }

    /** Chains of {@code listed} (hash to parent) from their roots, each up to its deepest listed record. */
    private static List<List<RecordSpec>> listedPrefixes(Map<Long, Long> listed, long base) {
        Map<Long, Integer> depth = new TreeMap<>(); // chain index -> records listed
        for (long hash : listed.keySet()) {
            depth.merge((hash - base) / CHAIN, 1, Integer::sum);
        }
        List<List<RecordSpec>> out = new ArrayList<>();
        depth.forEach((index, n) -> out.add(KeyedChains.chain(NS, base, (int) (long) index, CHAIN).subList(0, n)));
        return out;
    }

    private static void awaitTrue(Duration timeout, String what, Check check) throws Exception {
        awaitTrue(timeout, what, check, () -> "");
    }

    /** Waits until {@code check} holds; on timeout, fails with {@code what} and what {@code diagnosis} says then. */
    private static void awaitTrue(Duration timeout, String what, Check check, Supplier<String> diagnosis)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check.holds()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + timeout.toMillis() + " ms: " + what + "; "
                        + diagnosis.get());
            }
            Thread.sleep(100);
        }
    }

    /** A condition that may throw while it is checked. */
    @FunctionalInterface
    private interface Check {
        boolean holds() throws Exception;
    }

    /** Publishes chains of {@link #CHAIN} records on a thread of its own and tracks which the host retired. */
    private final class Publishing {
        private final SeleneCache host;
        private final long base;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private volatile boolean paused;
        private volatile boolean publishing;
        private volatile boolean resumed;
        /** Publications since the start, or since {@link #resume()}. */
        private volatile int publishedSinceResume;
        private final Thread thread;
        /** Every publication: its spec, when it started and how it ended. Guarded by itself. */
        private final List<Published> published = new ArrayList<>();
        private final Set<RecordKey> retired = new LinkedHashSet<>();
        private volatile Throwable failure;

        private record Published(RecordSpec spec, int chain, long startNanos, PublishResult result) {
        }

        Publishing(SeleneCache host, long base) {
            this.host = host;
            this.base = base;
            this.thread = new Thread(this::run, "publishing");
        }

        void start() {
            thread.start();
        }

        private void run() {
            try {
                for (int c = 0; running.get(); c++) {
                    for (RecordSpec s : KeyedChains.chain(NS, base, c, CHAIN)) {
                        while ((paused || publishedSinceResume >= PUBLISH_LIMIT / (resumed ? 2 : 1))
                                && running.get()) {
                            Thread.sleep(10);
                        }
                        publishing = true;
                        long start = System.nanoTime();
                        PublishOutcome o = KeyedChains.publish(host, device, s);
                        synchronized (published) {
                            published.add(new Published(s, c, start, o.result()));
                        }
                        publishedSinceResume++;
                        publishing = false;
                    }
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(60));
        }

        /** Holds the next publication back; returns once the one under way (if any) has ended. */
        void pause() throws InterruptedException {
            paused = true;
            long deadline = System.nanoTime() + KeyedChains.SNAPSHOT_LEASE.plusSeconds(10).toNanos();
            while (publishing && System.nanoTime() - deadline < 0) {
                Thread.sleep(10);
            }
        }

        /** Lets publication go on, for at most half {@link #PUBLISH_LIMIT} more records. */
        void resume() {
            publishedSinceResume = 0;
            resumed = true;
            paused = false;
        }

        private List<Published> published() {
            synchronized (published) {
                return List.copyOf(published);
            }
        }

        /** Chains published so far (each with at least one publication). */
        List<List<RecordSpec>> chains() {
            Map<Integer, List<RecordSpec>> byChain = new TreeMap<>();
            for (Published p : published()) {
                byChain.computeIfAbsent(p.chain(), c -> new ArrayList<>()).add(p.spec());
            }
            return List.copyOf(byChain.values());
        }

        /** The records the host now counts as retired (asked of the host for those not retired before). */
        Set<RecordKey> retired() throws Exception {
            if (failure != null) {
                throw new AssertionError("publishing failed", failure);
            }
            for (Published p : published()) {
                if (!retired.contains(p.spec().key()) && KeyedChains.retired(host, p.spec().key())) {
                    retired.add(p.spec().key());
                }
            }
            return Set.copyOf(retired);
        }

        /** Chains whose first publication started after {@code nanos}, retired whole. */
        int chainsRetiredWholeAfter(long nanos) throws Exception {
            Set<RecordKey> now = retired();
            Map<Integer, List<Published>> byChain = new TreeMap<>();
            for (Published p : published()) {
                byChain.computeIfAbsent(p.chain(), c -> new ArrayList<>()).add(p);
            }
            int n = 0;
            for (List<Published> chain : byChain.values()) {
                if (chain.size() == CHAIN && chain.getFirst().startNanos() - nanos > 0
                        && chain.stream().allMatch(p -> now.contains(p.spec().key()))) {
                    n++;
                }
            }
            return n;
        }

        /** Publications started after {@code nanos} that were not stored. */
        List<String> unstoredAfter(long nanos) {
            return published().stream()
                    .filter(p -> p.startNanos() - nanos > 0 && !(p.result() instanceof PublishResult.Stored))
                    .map(p -> p.spec().key() + ": " + p.result())
                    .toList();
        }

        /** The retirements in flight and those that failed since {@code nanos}, for a failure message. */
        String diagnosis(long nanos) {
            return "retirements in flight (last step, for how long): " + retiring()
                    + "; retirements failed (seconds after the kill): " + retireFailures(nanos);
        }

        /** Records whose last step is a retirement under way: the step and how long ago it was, in seconds. */
        List<String> retiring() {
            long now = System.currentTimeMillis();
            List<String> out = new ArrayList<>();
            for (Published p : published()) {
                List<TraceEvent> trace = host.traces().trace(p.spec().key()).orElse(List.of());
                if (!trace.isEmpty() && trace.getLast().message().startsWith("Retire: ")) {
                    out.add(p.spec().key() + " '" + trace.getLast().message() + "' for "
                            + (now - trace.getLast().epochMillis()) / 1000.0 + " s");
                }
            }
            return out;
        }

        /** The host's trace lines of retirements that failed, with their time in seconds after {@code nanos}. */
        List<String> retireFailures(long nanos) {
            long epochMillisAtNanos = System.currentTimeMillis() - millisSince(nanos);
            List<String> out = new ArrayList<>();
            for (Published p : published()) {
                for (TraceEvent e : host.traces().trace(p.spec().key()).orElse(List.of())) {
                    if (e.message().startsWith("Retire failed")) {
                        out.add(p.spec().key() + " at " + (e.epochMillis() - epochMillisAtNanos) / 1000.0 + " s: "
                                + e.message());
                    }
                }
            }
            return out;
        }

        /** For each chain, its records from the root up to the deepest one in {@code retired}. */
        List<List<RecordSpec>> retiredPrefixes(Set<RecordKey> retired) {
            List<List<RecordSpec>> out = new ArrayList<>();
            for (List<RecordSpec> chain : chains()) {
                int depth = 0;
                for (int i = 0; i < chain.size(); i++) {
                    if (retired.contains(chain.get(i).key())) {
                        depth = i + 1;
                    }
                }
                if (depth > 0) {
                    out.add(chain.subList(0, depth));
                }
            }
            return out;
        }
    }

    /** Restores chains published so far, at random, from another host, and checks every record it reports. */
    private final class Restoring {
        private final SeleneCache host;
        private final Publishing publishing;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;
        private final Random random = new Random(7);
        private final List<String> wrongBytes = new CopyOnWriteArrayList<>();
        private final Map<String, Integer> outcomes = new TreeMap<>();
        private volatile Throwable failure;

        Restoring(SeleneCache host, Publishing publishing) {
            this.host = host;
            this.publishing = publishing;
            this.thread = new Thread(this::run, "restoring");
        }

        void start() {
            thread.start();
        }

        private void run() {
            try {
                while (running.get()) {
                    List<List<RecordSpec>> chains = publishing.chains();
                    if (chains.isEmpty()) {
                        Thread.sleep(50);
                        continue;
                    }
                    List<RecordSpec> chain = chains.get(random.nextInt(chains.size()));
                    KeyedChains.Restore r = KeyedChains.restore(host, device, chain);
                    synchronized (outcomes) {
                        outcomes.merge(r.result().outcome() + "/" + r.result().records(), 1, Integer::sum);
                    }
                    if (!r.noWrongBytes()) {
                        wrongBytes.add(chain.getFirst().key() + ": " + r);
                    }
                    Thread.sleep(20);
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(60));
        }

        void assertNoFailure() {
            if (failure != null) {
                throw new AssertionError("restoring failed", failure);
            }
        }

        List<String> wrongBytes() {
            return List.copyOf(wrongBytes);
        }

        int restored() {
            synchronized (outcomes) {
                return outcomes.entrySet().stream().filter(e -> e.getKey().startsWith("RESTORED"))
                        .mapToInt(Map.Entry::getValue).sum();
            }
        }

        @Override
        public String toString() {
            synchronized (outcomes) {
                return "restores by outcome/records: " + outcomes;
            }
        }
    }
}
