package dev.selene.actors.pool;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.LookupResult;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.selene.actors.pool.PoolFixture.await;
import static dev.selene.actors.pool.PoolFixture.chain;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A manager's store on a real cluster node, fed by a real host: least recently used out by one recency order for
 * the whole store (namespaces compete on recency alone), and max age swept in every namespace with totals per
 * namespace, stale leaves only. The fixture checks the store's invariants after each test.
 */
class ManagerStoreTest {

    /** Slots of one record of the small layout with a row (its pieces). */
    private static final int RECORD_SLOTS = PoolFixture.LAYOUT.slotsPerRecord(true);

    private final PoolFixture pool = new PoolFixture();

    @AfterEach
    void stop() {
        pool.close();
    }

    private List<RecordSpec> retireRoot(SeleneCache host, String namespace, long hash) throws Exception {
        List<RecordSpec> one = pool.publishChain(host, namespace, hash, 1);
        assertEquals(0, await(host.drain(Duration.ofSeconds(20))).skipped());
        return one;
    }

    private static int matched(SeleneCache host, List<RecordSpec> specs) throws Exception {
        LookupResult r = await(host.lookup(specs.getFirst().key().namespace(), chain(specs)));
        return r.records().size();
    }

    @Test
    void whenFull_theLeastRecentlyUsedRecordOfAnyNamespaceGoesFirst() throws Exception {
        PoolManagerNode manager = pool.manager(3 * RECORD_SLOTS, 1);
        SeleneCache writer = pool.host(0, null);
        SeleneCache reader = pool.host(0, null);
        List<RecordSpec> a1 = retireRoot(writer, "tenant-a", 1);
        List<RecordSpec> b2 = retireRoot(writer, "tenant-b", 2);
        List<RecordSpec> a3 = retireRoot(writer, "tenant-a", 3);
        pool.restoreAndVerify(reader, a1); // a1 is now the most recently used; b2 the least

        List<RecordSpec> b4 = retireRoot(writer, "tenant-b", 4);

        ManagerStore.StoreStatus s = await(manager.status());
        assertEquals(3, s.records());
        assertEquals(1, s.evicted());
        assertEquals(0, matched(reader, b2), "the least recently used record, of another namespace, went");
        assertEquals(1, matched(reader, a1));
        assertEquals(1, matched(reader, a3));
        assertEquals(1, matched(reader, b4));
        pool.restoreAndVerify(reader, b4);
    }

    @Test
    void maxAge_takesStaleLeavesOfEveryNamespace_countedPerNamespace_andKeepsAChainAChildRefreshed()
            throws Exception {
        int port = PoolFixture.freePort();
        PoolManagerNode manager = pool.manager(port, port, 64, 1, Duration.ofSeconds(2));
        SeleneCache writer = pool.host(0, null);
        List<RecordSpec> a = retireRoot(writer, "tenant-a", 10);
        retireRoot(writer, "tenant-b", 11);
        retireRoot(writer, "tenant-b", 12);
        List<RecordSpec> chain = new ArrayList<>(pool.publishChain(writer, "tenant-a", 20, 2));
        assertEquals(0, await(writer.drain(Duration.ofSeconds(20))).skipped());
        Thread.sleep(2_500); // every record above is now older than max age

        chain.addAll(pool.publishChain(writer, "tenant-a", 22, 1, 21L)); // its upload refreshes 20 and 21
        List<RecordSpec> fresh = retireRoot(writer, "tenant-b", 13);
        List<RecordKey> expired = await(manager.expireNow()).keys();

        SeleneCache reader = pool.host(0, null);
        pool.restoreAndVerify(reader, chain);
        assertEquals(1, matched(reader, fresh));
        assertEquals(0, matched(reader, a));
        assertEquals(Set.of(a.getFirst().key(), new RecordKey("tenant-b", 11), new RecordKey("tenant-b", 12)),
                Set.copyOf(expired), "the stale leaves, and nothing fresh");
        assertEquals(3, expired.size());
        assertEquals(Map.of("tenant-a", 1L, "tenant-b", 2L), await(manager.status()).expiredByNamespace());
    }

    @Test
    void maxAge_overTwoManagers_keepsTheAncestorsOfAGrowingChainFreshOnTheManagerThatDoesNotHoldItsNewRecords()
            throws Exception {
        int port = PoolFixture.freePort();
        PoolManagerNode m1 = pool.manager(port, port, 64, 1, Duration.ofSeconds(4));
        PoolManagerNode m2 = pool.manager(PoolFixture.freePort(), port, 64, 1, Duration.ofSeconds(4));
        SeleneCache writer = pool.host(0, null);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                PoolBaseline.stores(writer.system()).size() == 2);
        List<RecordSpec> chain = new ArrayList<>(pool.publishChain(writer, "tenant-a", 50, 6));
        assertEquals(0, await(writer.drain(Duration.ofSeconds(20))).skipped());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                await(m1.status()).records() + await(m2.status()).records() == 6);
        assertTrue(await(m1.status()).records() > 0 && await(m2.status()).records() > 0,
                "placement is per record: the chain is spread over both managers");
        Thread.sleep(4_500); // every record above is now older than max age

        // The chain grows by one record: its upload refreshes every record above it, on whichever manager.
        long keptBefore = keptFresh(m1, m2);
        chain.addAll(pool.publishChain(writer, "tenant-a", 56, 1, 55L));
        assertEquals(0, await(writer.drain(Duration.ofSeconds(20))).skipped());
        // The stores report what they took within 20 ms, and the directory then tells the holders: 2 s at most here,
        // well within the max age, so the new record itself is fresh when the sweeps run.
        for (int i = 0; i < 20 && keptFresh(m1, m2) < keptBefore + 6; i++) {
            Thread.sleep(100);
        }
        List<RecordKey> expired = new ArrayList<>(await(m1.expireNow()).keys());
        expired.addAll(await(m2.expireNow()).keys());

        assertEquals(List.of(), expired, "no record of a chain in use expires, whichever manager holds it");
        pool.restoreAndVerify(pool.host(0, null), chain);
        assertTrue(keptFresh(m1, m2) >= keptBefore + 6,
                "the six records above the new one were refreshed by their holders");
    }

    private static long keptFresh(PoolManagerNode... managers) throws Exception {
        long sum = 0;
        for (PoolManagerNode m : managers) {
            sum += await(m.status()).keptFresh();
        }
        return sum;
    }

    @Test
    void evictionsOnTwoReplicas_leaveBothStoresHoldingWhatTheDirectoryFinds() throws Exception {
        PoolManagerNode m1 = pool.manager(4 * RECORD_SLOTS, 2);
        PoolManagerNode m2 = pool.manager(4 * RECORD_SLOTS, 2);
        SeleneCache writer = pool.host(0, null);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                PoolBaseline.stores(writer.system()).size() == 2);
        // The older records are retired one at a time, so that both stores took them in the same order and find the
        // same ones coldest: a store that evicts a record tells the directory, which has the other holder drop its
        // copy too, so stores whose orders differed would each drop the other's choice as well as their own.
        List<List<RecordSpec>> old = new ArrayList<>();
        for (long h = 1; h <= 3; h++) {
            old.add(pool.publishChain(writer, "tenant-a", h, 1));
            assertEquals(0, await(writer.drain(Duration.ofSeconds(20))).skipped());
            long retired = h;
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                    await(m1.status()).records() == retired && await(m2.status()).records() == retired);
        }
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                await(m1.status()).records() == 3 && await(m2.status()).records() == 3);

        // Three more records, retired in one drain: each store evicts two of the older ones, within a report or two
        // to the directory.
        List<List<RecordSpec>> fresh = new ArrayList<>();
        for (long h = 4; h <= 6; h++) {
            fresh.add(pool.publishChain(writer, "tenant-a", h, 1));
        }
        assertEquals(0, await(writer.drain(Duration.ofSeconds(20))).skipped());

        SeleneCache reader = pool.host(0, null);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                old.stream().filter(specs -> matchedQuietly(reader, specs) == 1).count() == 1);
        for (List<RecordSpec> specs : fresh) {
            assertEquals(1, matched(reader, specs), "a record retired last is found");
            pool.restoreAndVerify(reader, specs);
        }
        assertEquals(4, await(m1.status()).records(), "the first store holds the four the directory finds");
        assertEquals(4, await(m2.status()).records(), "the second store holds the four the directory finds");
        assertEquals(4, await(m1.status()).evicted() + await(m2.status()).evicted(), "each store evicted two");
        for (PoolManagerNode m : List.of(m1, m2)) {
            ManagerStore.StoreStatus full = await(m.status());
            assertEquals(full.capacityBytes(), full.bytes(), "a full store: its held bytes are its capacity, in one "
                    + "unit (the slots' bytes)");
        }
    }

    @Test
    void aRecordReadFromOneReplica_isRefreshedOnTheOther_soBothEvictTheSameColderRecord_andTheReadOneStays()
            throws Exception {
        PoolManagerNode m1 = pool.manager(4 * RECORD_SLOTS, 2);
        PoolManagerNode m2 = pool.manager(4 * RECORD_SLOTS, 2);
        SeleneCache writer = pool.host(0, null);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                PoolBaseline.stores(writer.system()).size() == 2);
        // Four records, one at a time, so that both stores took them in the same order: 1 is the coldest on both.
        List<List<RecordSpec>> held = new ArrayList<>();
        for (long h = 1; h <= 4; h++) {
            held.add(pool.publishChain(writer, "tenant-a", h, 1));
            assertEquals(0, await(writer.drain(Duration.ofSeconds(20))).skipped());
            long retired = h;
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                    await(m1.status()).records() == retired && await(m2.status()).records() == retired);
        }

        // The directory may learn of a store's copies a few seconds late on a cluster this young (its sharding still
        // finding where the entity lives): the refresh goes to the holders it knows.
        for (List<RecordSpec> specs : held) {
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> holders(m1, specs.getFirst().key()) == 2);
        }
        // Another host reads 1 from one replica (from both, if its first fetch is slow): the store that serves counts
        // the use, and the other replica is told of it.
        SeleneCache reader = pool.host(0, null);
        pool.restoreAndVerify(reader, held.getFirst());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                await(m1.status()).refreshed() + await(m2.status()).refreshed() >= 1);

        // A fifth record: each full store evicts its coldest, now 2 on both.
        List<RecordSpec> fifth = pool.publishChain(writer, "tenant-a", 5, 1);
        assertEquals(0, await(writer.drain(Duration.ofSeconds(20))).skipped());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                await(m1.status()).evicted() == 1 && await(m2.status()).evicted() == 1);

        assertEquals(1, matched(reader, held.getFirst()), "the record read stays in the pool");
        pool.restoreAndVerify(reader, held.getFirst());
        assertEquals(0, matchedQuietly(reader, held.get(1)), "the coldest went from both replicas");
        pool.restoreAndVerify(reader, fifth);
        assertEquals(4, await(m1.status()).records());
        assertEquals(4, await(m2.status()).records());
    }

    @Test
    void copiesToAStoreWhoseDataPlaneCannotBeReached_areLoggedOnceForAll_theTargetIsAStandIn() throws Exception {
        PoolManagerNode manager = pool.manager(8 * RECORD_SLOTS, 1);
        SeleneCache writer = pool.host(0, null);
        List<RecordSpec> held = new ArrayList<>();
        for (long h = 1; h <= 5; h++) {
            held.addAll(retireRoot(writer, "tenant-a", h));
        }
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                await(manager.status()).records() == held.size());
        // A stand-in for another store: it answers as a store would, naming a data address nothing listens on.
        int nothingListens = PoolFixture.freePort();
        ActorRef<ManagerStore.Command> target = manager.system().systemActorOf(
                Behaviors.receiveMessage((ManagerStore.Command m) -> {
                    if (m instanceof ManagerStore.GetStatus g) {
                        g.replyTo().tell(new ManagerStore.StoreStatus("stand-in", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                0, 0, 0, Map.of(), "127.0.0.1:" + nothingListens, 1, PoolFixture.LAYOUT.name()));
                    }
                    return Behaviors.same();
                }), "stand-in-store", Props.empty());
        try (LogCapture log = new LogCapture(ManagerStore.class)) {
            for (RecordSpec s : held) {
                manager.store().tell(new ManagerStore.CopyTo(s.key(), target));
            }
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> !copyLines(log).isEmpty());
            Thread.sleep(2 * ManagerStore.COPY_FAILURES_LOGGED_EVERY.toMillis()); // no second line comes
            List<String> lines = copyLines(log);
            assertEquals(1, lines.size(), "one line for the five copies that failed alike: " + lines);
            assertTrue(lines.getFirst().startsWith("5 replicas not copied"), lines.getFirst());
            assertTrue(lines.getFirst().contains("127.0.0.1:" + nothingListens), lines.getFirst());
        }
        assertEquals(held.size(), await(manager.status()).records(), "a failed copy leaves its source's record");
    }

    private static List<String> copyLines(LogCapture log) {
        return log.infoLines().stream().filter(m -> m.contains("not copied")).toList();
    }

    /** How many stores the directory entity of {@code key}'s namespace names for it, asked from {@code m}. */
    private static int holders(PoolManagerNode m, RecordKey key) throws Exception {
        List<PoolDirectory.Located> found = ClusterSharding.get(m.system())
                .entityRefFor(PoolDirectory.TYPE, PoolDirectory.entityId(key.namespace(), PoolStore.DIRECTORY_SHARDS))
                .<PoolDirectory.Found>ask(q -> new PoolDirectory.Locate(key, q), Duration.ofSeconds(5))
                .toCompletableFuture().get().records();
        return found.isEmpty() ? 0 : found.getFirst().holders().size();
    }

    private static int matchedQuietly(SeleneCache host, List<RecordSpec> specs) {
        try {
            return matched(host, specs);
        } catch (Exception e) {
            return -1;
        }
    }
}
