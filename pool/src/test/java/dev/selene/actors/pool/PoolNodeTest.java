package dev.selene.actors.pool;

import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.NodeInvariants;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.LookupResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.Tier;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.key.RecordSpec;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.selene.actors.pool.PoolFixture.NS;
import static dev.selene.actors.pool.PoolFixture.await;
import static dev.selene.actors.pool.PoolFixture.chain;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hosts and pool managers as real Pekko Cluster members on loopback, in one JVM (each its own actor system): a
 * record retired by one host is restored byte-identically by another, with two replicas, unless recomputing is
 * estimated faster (B15); a replica lost with its manager is rebuilt on another.
 */
class PoolNodeTest {

    private final PoolFixture pool = new PoolFixture();

    @AfterEach
    void stop() {
        pool.close();
    }

    @Test
    void aRecordRetiredByOneHost_isRestoredByteIdenticallyByAnother_fromTwoReplicas_unlessRecomputingIsFaster() throws Exception {
        PoolManagerNode m1 = pool.manager(256, 2);
        PoolManagerNode m2 = pool.manager(256, 2);
        SeleneCache a = pool.host(0, null);
        List<RecordSpec> specs = pool.publishChain(a, 1, 6);
        DrainReport drained = await(a.drain(Duration.ofSeconds(30)));
        assertEquals(0, drained.skipped(), "every record retired: " + drained);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                await(m1.status()).records() == 6 && await(m2.status()).records() == 6);
        assertEquals(6, a.counters().get("pool.retired"), "each retirement counted once");
        assertEquals(0, a.counters().get("pool.under_replicated"), "both replicas stored: none short of them");

        SeleneCache b = pool.host(0, null);
        LookupResult found = await(b.lookup(NS, chain(specs)));
        assertEquals(6, found.records().size(), found.missReason());
        assertTrue(found.records().stream().allMatch(l -> l.tier() == Tier.POOL), found.toString());
        // The cost check counts the pool's bytes at the pool's estimate: recomputing in a microsecond wins.
        List<DevicePlacement> unused = specs.stream().map(s -> pool.target()).toList();
        RestoreResult refused = await(b.restore(NS, chain(specs), unused, Duration.ofNanos(1_000)));
        assertEquals(RestoreResult.Outcome.REFUSED, refused.outcome(), refused.toString());
        assertTrue(refused.detail().contains("from the pool"), refused.detail());
        RestoreResult r = pool.restoreAndVerify(b, specs);
        assertEquals(6, r.fromPool());
    }

    @Test
    void aManagerWhoseStoreCannotBindItsDataPort_failsToStartSayingWhy_andLeavesNoNodeRunning() throws Exception {
        int port = PoolFixture.freePort();
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
             LogCapture store = new LogCapture(ManagerStore.class);
             LogCapture node = new LogCapture(PoolManagerNode.class)) {
            ManagerConfig config = new ManagerConfig(PoolFixture.LAYOUT, 16L * PoolFixture.LAYOUT.slotBytes(), null,
                    1, ManagerConfig.DEFAULT_DIRECTORY_SHARDS, taken.getLocalPort());
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> PoolManagerNode.start(config,
                    PoolCluster.config("127.0.0.1", port, List.of("127.0.0.1:" + port), PoolCluster.MANAGER_ROLE,
                            CacheSettings.standaloneSystemConfig())));
            assertEquals("the pool manager did not start: its store could not start (an earlier log line says why)",
                    e.getMessage());
            List<String> why = store.errorLines();
            assertEquals(1, why.size(), why.toString());
            assertTrue(why.getFirst().startsWith("the pool store could not start: its data plane cannot listen on "
                    + "127.0.0.1:" + taken.getLocalPort() + " ("), why.getFirst());
            assertFalse(why.getFirst().endsWith("]"), "no stack trace: " + why.getFirst());
            assertEquals(List.of("the pool manager stops: its store stopped"), node.errorLines());
        }
        // Its cluster port is free again: the node it started is gone, not left running without a store.
        PoolManagerNode m = pool.manager(port, port, 16, 1, null);
        assertTrue(m.status().toCompletableFuture().get(5, TimeUnit.SECONDS).dataAddress().startsWith("127.0.0.1:"));
    }

    @Test
    void aPoolOnlyHost_remembersOfWhatItRetiredNoMoreThanTheManagersHold() throws Exception {
        int recordSlots = PoolFixture.LAYOUT.slotsPerRecord(true);
        // Room for 8 records' pieces (a manager keeps each image's header and footer beside its slots).
        PoolManagerNode m = pool.manager(8 * recordSlots, 1);
        SeleneCache a = pool.host(0, null);
        List<RecordSpec> last = List.of();
        for (int i = 0; i < 12; i++) {
            last = pool.publishChain(a, NS, 100 + i, 1, null);
            assertEquals(0, await(a.drain(Duration.ofSeconds(20))).skipped(), "record " + i + " retired");
        }

        assertEquals(8, await(m.status()).records(), "the manager holds the latest 8 it was sent");
        // The host charges a record its image's length (its pieces, header and footer), the manager its pieces:
        // told the pool's room in image bytes, the host remembers what the manager holds, not all 12 it retired,
        // and not fewer (a record it forgot would be recomputed though the pool holds it).
        assertEquals(8, await(a.records(NS, Tier.POOL, 0, 1_000)).total(),
                "the host remembers what the pool holds (image " + RecordFileFormat.fileLength(PoolFixture.LAYOUT,
                        true) + " bytes, " + recordSlots + " slots of " + PoolFixture.LAYOUT.slotBytes() + ")");
        assertEquals(1, await(a.lookup(NS, chain(last))).records().size(), "the latest is remembered");
    }

    @Test
    void restoresFromThePoolAtTheSameTime_eachGetTheirOwnRecords_byteIdentical() throws Exception {
        pool.manager(256, 2);
        pool.manager(256, 2);
        SeleneCache a = pool.host(0, null);
        List<List<RecordSpec>> chains = new ArrayList<>();
        for (int c = 0; c < 6; c++) {
            chains.add(pool.publishChain(a, 1_000L * (c + 1), 3));
        }
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());
        SeleneCache b = pool.host(0, null);
        List<List<DevicePlacement>> targets = new ArrayList<>();
        List<CompletableFuture<RestoreResult>> restores = new ArrayList<>();
        for (List<RecordSpec> chain : chains) {
            List<DevicePlacement> t = chain.stream().map(s -> pool.target()).toList();
            targets.add(t);
            restores.add(b.restore(NS, chain(chain), t, Duration.ofHours(1)).toCompletableFuture());
        }
        for (int c = 0; c < chains.size(); c++) {
            RestoreResult r = await(restores.get(c));
            assertEquals(RestoreResult.Outcome.RESTORED, r.outcome(), "chain " + c + ": " + r.detail());
            assertEquals(3, r.fromPool(), "chain " + c);
            for (int i = 0; i < 3; i++) {
                assertTrue(KeyedContent.verifyRecord(pool.copier, PoolFixture.LAYOUT, targets.get(c).get(i),
                        chains.get(c).get(i).key(), true), "chain " + c + " record " + i + " byte-identical");
            }
        }
        // a finished transfer's deadline goes with it (it held the fetch's buffers until it came due)
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> TransferDeadlines.pending() == 0);
    }

    @Test
    void aRecordHeldElsewhereThanItsKeyNowPlacesIt_isRestoredByItsHost_fromTheHolderTheDirectoryNames()
            throws Exception {
        // One replica: what the host retires while only the first manager is up stays there alone, and once a
        // second manager has joined, about half of those keys rank the newcomer first.
        PoolManagerNode m1 = pool.manager(256, 1);
        SeleneCache a = pool.host(0, null);
        List<RecordSpec> specs = pool.publishChain(a, 100, 8);
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());
        PoolManagerNode m2 = pool.manager(256, 1);
        long[] next = {10_000};
        // The host places records on the newcomer once it uses it.
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
            pool.publishChain(a, next[0]++, 1);
            await(a.drain(Duration.ofSeconds(30)));
            return await(m2.status()).records() > 0;
        });
        String at1 = await(m1.status()).address();
        String at2 = await(m2.status()).address();
        long placedOnM2 = specs.stream()
                .filter(s -> Placement.score(s.key(), at2) > Placement.score(s.key(), at1)).count();
        assertTrue(placedOnM2 > 0, "some of the chain's keys rank the newcomer first");

        long served = await(m1.status()).serves();
        long servedBy2 = await(m2.status()).serves();
        RestoreResult r = pool.restoreAndVerify(a, specs);
        assertEquals(8, r.fromPool());
        // A manager counts a serve when its last bytes have left, which can be a moment after the host has them.
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> await(m1.status()).serves() >= served + 8);
        assertEquals(served + 8, await(m1.status()).serves(), "every record came from the manager that holds it");
        assertEquals(servedBy2, await(m2.status()).serves(), "the newcomer, which holds none of them, served none");
    }

    @Test
    void aHolderNotYetListedToAHost_isReadWhenTheDirectoryNamesIt_listingHiddenByFaultInjection() throws Exception {
        // A host that joined a moment ago learns the managers' stores one by one as the cluster's listing spreads.
        // Until then the directory may name a holder the host has not seen listed: the host asks it where its data
        // plane listens and reads from it, rather than missing a record a reachable manager holds; and a lookup the
        // directory is late to answer waits for it, rather than take the listed stores' partial answer. The faults:
        // the reading host's listings leave out one manager (one replica, so that manager alone holds its records),
        // and it holds the directory's answers back for longer than the failover deadline, after which it asks the
        // stores it knows.
        PoolManagerNode m1 = pool.manager(256, 1);
        PoolManagerNode m2 = pool.manager(256, 1);
        SeleneCache a = pool.host(0, null);
        List<RecordSpec> specs = pool.publishChain(a, 300, 6);
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                await(m1.status()).records() + await(m2.status()).records() == 6);
        PoolManagerNode hidden = await(m2.status()).records() > 0 ? m2 : m1;
        // The directory hears of retirements a moment after the stores take them: the reader starts once it knows.
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> directoryFinds(m1, specs) == 6);
        long held = await(hidden.status()).records();
        long served = await(hidden.status()).serves();
        PoolStore.notYetListed = s -> s.path().address().equals(hidden.system().address());
        PoolStore.directoryHeldBack = PoolCluster.DEFAULT_FAILOVER.multipliedBy(3);
        try {
            SeleneCache b = pool.host(0, null);
            List<DevicePlacement> targets = specs.stream().map(sp -> pool.target()).toList();
            RestoreResult r = await(b.restore(NS, chain(specs), targets, Duration.ofHours(1)));
            assertEquals(6, r.fromPool(), r + KeyedChains.traces(b, specs));
            for (int i = 0; i < specs.size(); i++) {
                assertTrue(KeyedContent.verifyRecord(pool.copier, PoolFixture.LAYOUT, targets.get(i),
                        specs.get(i).key(), true), "record " + i + " byte-identical");
            }
            assertEquals(served + held, await(hidden.status()).serves(),
                    "the manager hidden from the reader served what it holds");
            assertTrue(KeyedChains.traces(b, specs).contains("not yet listed to this host"),
                    "the reader asked the unlisted holder where it listens:" + KeyedChains.traces(b, specs));
        } finally {
            PoolStore.notYetListed = s -> false;
            PoolStore.directoryHeldBack = Duration.ZERO;
        }
    }

    @Test
    void aManagerThatLeaves_hasItsReplicasRebuiltOnAnother_andNoRecordIsLost() throws Exception {
        PoolManagerNode m1 = pool.manager(256, 2);
        PoolManagerNode m2 = pool.manager(256, 2);
        PoolManagerNode m3 = pool.manager(256, 2);
        SeleneCache a = pool.host(0, null);
        List<RecordSpec> specs = pool.publishChain(a, 100, 8);
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());
        List<PoolManagerNode> all = List.of(m1, m2, m3);
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> total(all) == 16);

        m2.close();
        List<PoolManagerNode> left = List.of(m1, m3);
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() ->
                await(m1.status()).records() == 8 && await(m3.status()).records() == 8);
        assertEquals(16, total(left), "every record on both remaining managers");
        // what an operator waits for before stopping the next manager: no record short of replicas anywhere
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> left.stream()
                .mapToLong(m -> ReplicaShortfall.get(m.system()).total()).sum() == 0);

        SeleneCache b = pool.host(0, null);
        assertEquals(8, pool.restoreAndVerify(b, specs).fromPool());
    }

    @Test
    void aManagerThatStops_firstCopiesTheRecordsNoOtherManagerHolds_toAnother_soARollingRestartLosesNone()
            throws Exception {
        // One replica: each record is on one manager alone, which hands its records to the other as it stops.
        PoolManagerNode m1 = pool.manager(256, 1);
        PoolManagerNode m2 = pool.manager(256, 1);
        SeleneCache a = pool.host(0, null);
        List<RecordSpec> specs = pool.publishChain(a, 400, 8);
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> total(List.of(m1, m2)) == 8);
        boolean firstHoldsMore = await(m1.status()).records() >= await(m2.status()).records();
        PoolManagerNode stopping = firstHoldsMore ? m1 : m2;
        PoolManagerNode staying = firstHoldsMore ? m2 : m1;
        long held = await(stopping.status()).records();
        long uploads = await(staying.status()).uploads();

        stopping.close();
        assertEquals(8, await(staying.status()).records(), "the stopped manager's records are on the other one");
        assertEquals(uploads + held, await(staying.status()).uploads(), "each came over once");
        assertEquals("", await(staying.checkInvariants()));
        SeleneCache b = pool.host(0, null);
        assertEquals(8, pool.restoreAndVerify(b, specs).fromPool(), "every record restored from the pool");
    }

    @Test
    void aManagerThatIsStopping_refusesUploads_andAHostLeavesItOutOfPlacementUntilItHasLeft() throws Exception {
        PoolManagerNode m1 = pool.manager(256, 1);
        PoolManagerNode m2 = pool.manager(256, 1);
        SeleneCache a = pool.host(0, null);
        // m1's store begins its hand-off (as its manager's stop would) but the manager stays in the cluster
        PoolFixture.await(org.apache.pekko.actor.typed.javadsl.AskPattern.<ManagerStore.Command,
                ManagerStore.HandedOff>ask(m1.store(), ManagerStore.HandOff::new, Duration.ofSeconds(20),
                m1.system().scheduler()));

        pool.publishChain(a, 500, 8);
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped(), "every record retired, to the other one");
        long refused = await(m1.status()).refused();
        assertTrue(refused >= 1, "the stopping manager refused what was placed on it");
        assertEquals(0, await(m1.status()).records());
        // Past the few seconds a manager whose transfer failed is left out: this one still is.
        Thread.sleep(PoolStore.SUSPECT_FOR.plusMillis(500).toMillis());
        pool.publishChain(a, 600, 8);
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());
        assertEquals(refused, await(m1.status()).refused(), "nothing more placed on the stopping manager");
        assertEquals(16, await(m2.status()).records());
    }

    @Test
    void recordsShortOfReplicas_areCountedOnTheManagers_untilTheDirectoryHasCopiedThem() throws Exception {
        PoolManagerNode m1 = pool.manager(256, 2);
        SeleneCache a = pool.host(0, null);
        pool.publishChain(a, 700, 6);
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());
        assertEquals(0, ReplicaShortfall.get(m1.system()).total(), "one manager: one replica is all there can be");

        // a second manager joins: every record now wants a second copy, which the directory makes
        PoolManagerNode m2 = pool.manager(256, 2);
        List<PoolManagerNode> both = List.of(m1, m2);
        java.util.concurrent.atomic.AtomicLong most = new java.util.concurrent.atomic.AtomicLong();
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
            long shortNow = both.stream().mapToLong(m -> ReplicaShortfall.get(m.system()).total()).sum();
            most.accumulateAndGet(shortNow, Math::max);
            return total(both) == 12 && shortNow == 0;
        });
        assertEquals(6, most.get(), "every record was counted short before its copy (the directory waits a moment "
                + "before it copies)");
    }

    @Test
    void retirementsAfterAManagerLeft_areCountedShortOfReplicas() throws Exception {
        PoolManagerNode m1 = pool.manager(256, 2);
        PoolManagerNode m2 = pool.manager(256, 2);
        SeleneCache a = pool.host(0, null);
        pool.publishChain(a, 300, 2);
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());
        assertEquals(0, a.counters().get("pool.under_replicated"), "two managers, two replicas");

        long uploads = await(m1.status()).uploads();
        m2.close();
        assertEquals(uploads, await(m1.status()).uploads(), "the stopped manager handed nothing over: every record "
                + "it held, the other one holds too");
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> PoolBaseline.stores(a.system()).size() == 1);
        pool.publishChain(a, 310, 3);
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());

        assertEquals(5, a.counters().get("pool.retired"));
        assertEquals(3, a.counters().get("pool.under_replicated"), "one manager left where the pool keeps two");
        assertEquals(5, await(m1.status()).records());
    }

    @Test
    void aHostThatJoins_waitsForAsManyStoresAsReplicas_beforeItRetires_listingHeldBackByFaultInjection()
            throws Exception {
        // The cluster lists the managers' stores to a new member one by one. A host that started on the first would
        // place its first retirements on one replica where the pool keeps two. The fault: the joining host's
        // listings leave out the second manager until a third joins, which it starts to once the host had a listing.
        PoolManagerNode m1 = pool.manager(256, 2);
        PoolManagerNode m2 = pool.manager(256, 2);
        java.util.concurrent.CountDownLatch listed = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean hidden = new java.util.concurrent.atomic.AtomicBoolean(true);
        PoolStore.notYetListed = s -> {
            listed.countDown();
            return hidden.get() && s.path().address().equals(m2.system().address());
        };
        // The third manager may take longer to join a loaded machine than the host waits by default.
        PoolStore.startGrace = Duration.ofSeconds(30);
        CompletableFuture<PoolManagerNode> third = new CompletableFuture<>();
        // The fixture's lists are touched by this thread only while the test's thread starts the host (which adds
        // to another list) and waits; the finally below waits for it before the fixture is closed.
        Thread starter = Thread.ofPlatform().name("third-manager").start(() -> {
            try {
                // Once the host has had its first listing (the first manager's store alone), the second manager's
                // store is listed with the third's.
                if (!listed.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the host had no listing within 30 s");
                }
                Thread.sleep(200);
                hidden.set(false);
                third.complete(pool.manager(256, 2));
            } catch (Throwable t) {
                third.completeExceptionally(t);
            }
        });
        try {
            SeleneCache a = pool.host(0, null);
            List<RecordSpec> specs = pool.publishChain(a, 500, 8);
            assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());
            PoolManagerNode m3 = third.get(30, java.util.concurrent.TimeUnit.SECONDS);
            String traces = KeyedChains.traces(a, specs);
            assertFalse(traces.contains("short of replicas"), "every record placed on two managers: " + traces);
            assertEquals(16, total(List.of(m1, m2, m3)), "two replicas of each record as the drain ended");
        } finally {
            hidden.set(false);
            starter.join(Duration.ofSeconds(60));
            PoolStore.notYetListed = s -> false;
            PoolStore.startGrace = PoolStore.START_GRACE;
        }
    }

    /** How many records of {@code specs}' chain the namespace's directory entity finds, asked from {@code m}. */
    private static int directoryFinds(PoolManagerNode m, List<RecordSpec> specs) throws Exception {
        List<Long> hashes = specs.stream().map(sp -> sp.key().hash()).toList();
        return ClusterSharding.get(m.system())
                .entityRefFor(PoolDirectory.TYPE, PoolDirectory.entityId(NS, PoolStore.DIRECTORY_SHARDS))
                .<PoolDirectory.Found>ask(q -> new PoolDirectory.Find(NS, hashes, q), Duration.ofSeconds(5))
                .toCompletableFuture().get().records().size();
    }

    @Test
    void aPoolThatGoesAway_turnsItsRecordsIntoMisses_neverWrongBytes_andPublicationsGoOn() throws Exception {
        PoolManagerNode m1 = pool.manager(256, 2);
        PoolManagerNode m2 = pool.manager(256, 2);
        SeleneCache a = pool.host(0, null);
        List<RecordSpec> retired = pool.publishChain(a, 200, 8);
        assertEquals(0, await(a.drain(Duration.ofSeconds(30))).skipped());

        m2.close();
        m1.close();
        // The host's own memory still holds some of the chain; the rest was only in the pool. A restore gives the
        // part it can verify, or nothing, and never wrong bytes.
        List<DevicePlacement> targets = retired.stream().map(s -> pool.target()).toList();
        RestoreResult r = await(a.restore(NS, chain(retired), targets, Duration.ofHours(1)));
        assertTrue(r.outcome() != RestoreResult.Outcome.RESTORED || r.records() < retired.size(), r.toString());
        for (int i = 0; i < r.records(); i++) {
            assertTrue(KeyedContent.verifyRecord(pool.copier, PoolFixture.LAYOUT, targets.get(i),
                    retired.get(i).key(), true), "restored record " + i + " byte-identical");
        }
        // Publishing goes on: new records are stored (and, with no manager to retire them to, dropped later).
        assertEquals(10, pool.publishChain(a, 300, 10).size());
        assertEquals("", await(NodeInvariants.violation(a)));
        // No manager back within the join timeout (20 s here): the host stops by itself, as one the cluster removed,
        // since only a new start of it joins managers that come back (they form a cluster of their own).
        a.system().getWhenTerminated().toCompletableFuture().get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(java.util.Optional.of(PoolCluster.PoolLost.INSTANCE),
                org.apache.pekko.actor.CoordinatedShutdown.get(a.system()).getShutdownReason());
    }

    private static long total(List<PoolManagerNode> managers) throws Exception {
        long n = 0;
        for (PoolManagerNode m : managers) {
            n += await(m.status()).records();
        }
        return n;
    }

    /** #23 item 3: a host and a manager of different layouts refuse each other at join, in one line naming both. */
    @Test
    void aHostAndAManagerOfDifferentLayouts_refuseEachOtherAtJoin_inOneLineNamingBoth() throws Exception {
        int port = PoolFixture.freePort();
        pool.manager(dev.selene.engine.layout.Layout.deepseekTp4(), port, port, 40, 1, null);
        RuntimeException refused = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
                () -> pool.host(0, null));
        String line = refused.getMessage();
        assertTrue(line.contains("deepseek-tp4 layout") && line.contains("small layout"), line);
        assertFalse(line.contains("\n"), "one line: " + line);
    }

    @Test
    void aManagerJoiningWithAnotherLayoutOrReplicaCount_stopsItself_inOneLineNamingTheSetting() throws Exception {
        PoolManagerNode first = pool.manager(64, 2);
        int firstPort = Integer.parseInt(first.address().substring(first.address().lastIndexOf(':') + 1));
        String layout = misfitOf(() -> pool.manager(dev.selene.engine.layout.Layout.deepseekTp4(),
                PoolFixture.freePort(), firstPort, 40, 2, null));
        assertTrue(layout.startsWith("selene.layout = 'deepseek-tp4' is invalid: the pool's manager at ")
                && layout.contains("holds the small layout"), layout);
        assertFalse(layout.contains("\n"), layout);
        String replicas = misfitOf(() -> pool.manager(PoolFixture.freePort(), firstPort, 64, 1, null));
        assertTrue(replicas.startsWith("selene.manager.replicas = 1 is invalid: the pool's manager at "), replicas);
        assertFalse(first.isTerminated(), "the manager that was there first goes on");
        assertEquals(null, first.misfit());
    }

    /** The line a manager started by {@code start} stops with, whether it stops while starting or just after. */
    private static String misfitOf(java.util.concurrent.Callable<PoolManagerNode> start) throws Exception {
        PoolManagerNode m;
        try {
            m = start.call();
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(m::isTerminated);
        return String.valueOf(m.misfit());
    }
}
