package dev.selene.actors.pool;

import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.DrainReport;
import dev.selene.actors.api.LookupResult;
import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.PublishResult;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.RestoreResult;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.api.Tier;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hosts and pool managers as real Pekko Cluster members on loopback, in one JVM (each its own actor system): a
 * record retired by one host is restored byte-identically by another, with two replicas.
 */
class PoolNodeTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "pool";

    private final SimulatedDevice copier = SimulatedDevice.create();
    private final List<SeleneCache> hosts = new ArrayList<>();
    private final List<PoolManagerNode> managers = new ArrayList<>();

    @AfterEach
    void stop() {
        hosts.forEach(SeleneCache::close);
        managers.forEach(PoolManagerNode::close);
        copier.close();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Starts a manager on {@code port} that joins through {@code seed}. */
    private PoolManagerNode manager(int port, int seed, int replicas) {
        ManagerConfig config = new ManagerConfig(LAYOUT, 256 * LAYOUT.slotBytes(), null, replicas,
                ManagerConfig.DEFAULT_DIRECTORY_SHARDS);
        PoolManagerNode m = PoolManagerNode.start(config, PoolCluster.config("127.0.0.1", port,
                List.of("127.0.0.1:" + seed), PoolCluster.MANAGER_ROLE, CacheSettings.standaloneSystemConfig()));
        managers.add(m);
        return m;
    }

    /** A pool host without a warm tier: its slots are the intake, every record is retired. */
    private SeleneCache host(List<String> seeds) {
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 0).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true))
                .withHostBudgetBytes(40 * LAYOUT.slotBytes())
                .withPool(seeds).withDrainOnShutdown(false);
        SeleneCache cache = SeleneCache.start(config, copier);
        hosts.add(cache);
        return cache;
    }

    private static RecordSpec spec(long hash, Long parent) {
        return new RecordSpec(new RecordKey(NS, hash), parent == null ? null : new RecordKey(NS, parent), true);
    }

    private DevicePlacement snapshot(RecordSpec s) {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, s.hasRow()));
        DevicePlacement p = DevicePlacement.contiguous(LAYOUT, base, s.hasRow());
        KeyedContent.fillRecord(copier, LAYOUT, p, s.key(), s.hasRow());
        return p;
    }

    private DevicePlacement target() {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true));
        return DevicePlacement.contiguous(LAYOUT, base, true);
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    private List<RecordSpec> publishChain(SeleneCache cache, long first, int n) throws Exception {
        Publisher publisher = new Publisher(cache);
        List<RecordSpec> specs = new ArrayList<>();
        Long parent = null;
        for (int i = 0; i < n; i++) {
            RecordSpec s = spec(first + i, parent);
            PublishOutcome o = await(publisher.publish(s, snapshot(s),
                    SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(20))));
            assertInstanceOf(PublishResult.Stored.class, o.result(), "publication " + i + ": " + o);
            specs.add(s);
            parent = first + i;
        }
        return specs;
    }

    private static long[] chain(List<RecordSpec> specs) {
        return specs.stream().mapToLong(s -> s.key().hash()).toArray();
    }

    private RestoreResult restoreAndVerify(SeleneCache cache, List<RecordSpec> specs) throws Exception {
        List<DevicePlacement> targets = specs.stream().map(s -> target()).toList();
        RestoreResult r = await(cache.restore(NS, chain(specs), targets, Duration.ofHours(1)));
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome(), r.detail());
        assertEquals(specs.size(), r.records());
        for (int i = 0; i < specs.size(); i++) {
            assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(i), specs.get(i).key(), true),
                    "record " + i + " byte-identical");
        }
        return r;
    }

    @Test
    void aRecordRetiredByOneHost_isRestoredByteIdenticallyByAnother_fromTwoReplicas() throws Exception {
        int p1 = freePort();
        int p2 = freePort();
        PoolManagerNode m1 = manager(p1, p1, 2);
        PoolManagerNode m2 = manager(p2, p1, 2);
        List<String> seeds = List.of("127.0.0.1:" + p1, "127.0.0.1:" + p2);
        SeleneCache a = host(seeds);
        List<RecordSpec> specs = publishChain(a, 1, 6);
        DrainReport drained = await(a.drain(Duration.ofSeconds(30)));
        assertEquals(0, drained.skipped(), "every record retired: " + drained);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                await(m1.status()).records() == 6 && await(m2.status()).records() == 6);

        SeleneCache b = host(seeds);
        LookupResult found = await(b.lookup(NS, chain(specs)));
        assertEquals(6, found.records().size(), found.missReason());
        assertTrue(found.records().stream().allMatch(l -> l.tier() == Tier.POOL), found.toString());
        RestoreResult r = restoreAndVerify(b, specs);
        assertEquals(6, r.fromPool());
    }
}
