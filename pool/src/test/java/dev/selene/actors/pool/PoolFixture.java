package dev.selene.actors.pool;

import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;

import com.typesafe.config.Config;
import dev.selene.transport.pool.LoopbackPorts;
import dev.selene.transport.tls.PoolTls;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pool managers and hosts of one test, each a real Pekko Cluster member (its own actor system) on loopback in this
 * JVM, on the small layout and one simulated device; {@link #close()} stops them all.
 */
final class PoolFixture implements AutoCloseable {

    static final Layout LAYOUT = Layout.small();
    static final String NS = "pool";

    final SimulatedDevice copier = SimulatedDevice.create();
    private final List<SeleneCache> hosts = new ArrayList<>();
    private final List<PoolManagerNode> managers = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();

    static int freePort() throws IOException {
        return LoopbackPorts.reserve();
    }

    /** Starts a manager of {@code storeSlots} slots on a free port, joining the first manager started. */
    PoolManagerNode manager(int storeSlots, int replicas) throws IOException {
        int port = freePort();
        int seed = ports.isEmpty() ? port : ports.getFirst();
        return manager(port, seed, storeSlots, replicas, null);
    }

    /** Starts a manager on {@code port} that joins through {@code seed}. */
    PoolManagerNode manager(int port, int seed, int storeSlots, int replicas, Duration maxAge) {
        return manager(LAYOUT, port, seed, storeSlots, replicas, maxAge);
    }

    /** Starts a manager of {@code layout} on {@code port} that joins through {@code seed}. */
    PoolManagerNode manager(Layout layout, int port, int seed, int storeSlots, int replicas, Duration maxAge) {
        ManagerConfig config = new ManagerConfig(layout, storeSlots * layout.slotBytes(), maxAge, replicas,
                ManagerConfig.DEFAULT_DIRECTORY_SHARDS);
        PoolManagerNode m = PoolManagerNode.start(config, PoolCluster.config("127.0.0.1", port,
                List.of("127.0.0.1:" + seed), PoolCluster.MANAGER_ROLE, CacheSettings.standaloneSystemConfig()));
        managers.add(m);
        ports.add(port);
        return m;
    }

    /**
     * Starts a manager with TLS from {@code files} and namespace rules {@code access}, on a free port, joining the
     * first manager started; one that is expected to be refused ({@code member} false) is not listed as a seed.
     */
    PoolManagerNode tlsManager(PoolTls.Files files, Map<String, List<String>> access, boolean member)
            throws IOException {
        return securedManager(new PoolSecurity(files, PoolTls.Engine.JDK, PoolSecurity.PlainText.OFF, access), member);
    }

    /** Starts a manager secured by {@code security}, as {@link #tlsManager}. */
    PoolManagerNode securedManager(PoolSecurity security, boolean member) throws IOException {
        int port = freePort();
        int seed = ports.isEmpty() ? port : ports.getFirst();
        ManagerConfig config = new ManagerConfig(LAYOUT, 256 * LAYOUT.slotBytes(), null, 2,
                ManagerConfig.DEFAULT_DIRECTORY_SHARDS);
        PoolManagerNode m = PoolManagerNode.start(config, PoolCluster.config("127.0.0.1", port,
                List.of("127.0.0.1:" + seed), PoolCluster.MANAGER_ROLE, security,
                CacheSettings.standaloneSystemConfig()));
        managers.add(m);
        if (member) {
            ports.add(port);
        }
        return m;
    }

    /** A pool-only host with TLS from {@code files}. */
    SeleneCache tlsHost(PoolTls.Files files) {
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 0).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true))
                .withHostBudgetBytes(40L * LAYOUT.slotBytes())
                .withPool(seeds());
        Config pekko = new PoolSecurity(files, PoolTls.Engine.JDK, PoolSecurity.PlainText.OFF, Map.of()).settings()
                .withFallback(CacheSettings.standaloneSystemConfig());
        SeleneCache cache = SeleneCache.start(config, copier, pekko, PoolCluster.SYSTEM_NAME);
        hosts.add(cache);
        return cache;
    }

    /** The managers' addresses, {@code host:port}. */
    List<String> seeds() {
        return ports.stream().map(p -> "127.0.0.1:" + p).toList();
    }

    /** A host of {@code warmSlots} warm slots (0: intake only) over {@code config}'s other settings. */
    SeleneCache host(int warmSlots, String diskDir) {
        return host(warmSlots, diskDir, false);
    }

    /** A host as {@link #host(int, String)}, draining what is only in its memory when it is closed when asked. */
    SeleneCache host(int warmSlots, String diskDir, boolean drainOnShutdown) {
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, (long) warmSlots * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true))
                .withHostBudgetBytes((warmSlots + 40L) * LAYOUT.slotBytes())
                .withPool(seeds())
                .withDrainOnShutdown(drainOnShutdown);
        if (diskDir != null) {
            config = config.withDisk(diskDir, 64L << 20);
        }
        SeleneCache cache = SeleneCache.start(config, copier);
        hosts.add(cache);
        return cache;
    }

    /** Stops a host now (it stays in the list; closing twice is harmless). */
    void stopHost(SeleneCache host) {
        host.close();
    }

    static RecordSpec spec(long hash, Long parent) {
        return spec(NS, hash, parent);
    }

    static RecordSpec spec(String namespace, long hash, Long parent) {
        return new RecordSpec(new RecordKey(namespace, hash), parent == null ? null : new RecordKey(namespace, parent),
                true);
    }

    DevicePlacement snapshot(RecordSpec s) {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, s.hasRow()));
        DevicePlacement p = DevicePlacement.contiguous(LAYOUT, base, s.hasRow());
        KeyedContent.fillRecord(copier, LAYOUT, p, s.key(), s.hasRow());
        return p;
    }

    DevicePlacement target() {
        long base = copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true));
        return DevicePlacement.contiguous(LAYOUT, base, true);
    }

    static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(40, TimeUnit.SECONDS);
    }

    /** Publishes a chain of {@code n} records from {@code first} with the retrying publisher; each is stored. */
    List<RecordSpec> publishChain(SeleneCache cache, long first, int n) throws Exception {
        return publishChain(cache, NS, first, n);
    }

    /** Publishes a chain of {@code n} records of {@code namespace}. */
    List<RecordSpec> publishChain(SeleneCache cache, String namespace, long first, int n) throws Exception {
        return publishChain(cache, namespace, first, n, null);
    }

    /** Publishes a chain of {@code n} records of {@code namespace} under {@code parent} (null: from a root). */
    List<RecordSpec> publishChain(SeleneCache cache, String namespace, long first, int n, Long parent)
            throws Exception {
        Publisher publisher = new Publisher(cache);
        List<RecordSpec> specs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            RecordSpec s = spec(namespace, first + i, parent);
            PublishOutcome o = await(publisher.publish(s, snapshot(s),
                    SnapshotLease.until(System.nanoTime() + TimeUnit.SECONDS.toNanos(20))));
            assertInstanceOf(PublishResult.Stored.class, o.result(), "publication " + i + ": " + o);
            specs.add(s);
            parent = first + i;
        }
        return specs;
    }

    static long[] chain(List<RecordSpec> specs) {
        return specs.stream().mapToLong(s -> s.key().hash()).toArray();
    }

    /** Restores the chain; asserts it is restored whole and every record is byte-identical. */
    RestoreResult restoreAndVerify(SeleneCache cache, List<RecordSpec> specs) throws Exception {
        List<DevicePlacement> targets = specs.stream().map(s -> target()).toList();
        RestoreResult r = await(cache.restore(specs.getFirst().key().namespace(), chain(specs), targets,
                Duration.ofHours(1)));
        assertEquals(RestoreResult.Outcome.RESTORED, r.outcome(), r.detail());
        assertEquals(specs.size(), r.records());
        for (int i = 0; i < specs.size(); i++) {
            assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, targets.get(i), specs.get(i).key(), true),
                    "record " + i + " byte-identical");
        }
        return r;
    }

    /**
     * Stops the hosts, checks every running manager's store invariants, then stops the managers newest first, so
     * the oldest (which runs the shard coordinator) leaves last and nothing has to move twice. A broken invariant
     * fails the test once everything has stopped.
     */
    @Override
    public void close() {
        hosts.parallelStream().forEach(SeleneCache::close);
        List<String> violations = new ArrayList<>();
        for (PoolManagerNode m : managers) {
            if (!m.isTerminated()) {
                try {
                    String v = await(m.checkInvariants());
                    if (!v.isEmpty()) {
                        violations.add(m.address() + ": " + v);
                    }
                } catch (Exception e) {
                    try {
                        // A manager the cluster downed shuts itself down: its store stopped with it.
                        m.system().getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
                    } catch (Exception notStopping) {
                        violations.add(m.address() + " did not answer the invariant check: " + e);
                    }
                }
            }
        }
        managers.reversed().forEach(PoolManagerNode::close);
        copier.close();
        assertEquals(List.of(), violations, "store invariants after the test");
    }
}
