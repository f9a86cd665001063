package dev.selene.actors.pool;

import dev.selene.actors.api.CacheSettings;
import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.transport.host.HostMemory;
import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.NettyDataPlane;
import dev.selene.transport.pool.OutgoingImage;
import dev.selene.transport.pool.Pushed;
import dev.selene.transport.pool.RecordImage;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store asked for a copy it cannot make tells the record's directory entity so, at once, instead of leaving the
 * entity to wait out its patience: the record is not held (dropped before the ask came), or its target cannot be
 * reached. A real store on a one-node cluster; the directory entity is a stand-in that hands every message to a
 * test probe, and the copy's target is a stand-in store naming a data address nothing listens on. A store handing its
 * records over as its manager stops goes on to the next target when one cannot be reached.
 */
class ManagerStoreCopyFailedTest {

    private final ActorTestKit kit = ActorTestKit.create(PoolCluster.SYSTEM_NAME, PoolCluster.config("127.0.0.1", 0,
            List.of(), PoolCluster.MANAGER_ROLE, CacheSettings.standaloneSystemConfig()));
    private final TestProbe<PoolDirectory.Command> directory = kit.createTestProbe("directory");

    @AfterEach
    void stop() {
        kit.shutdownTestKit();
    }

    /** The store under test, its directory entities all forwarding to {@link #directory}. */
    private ActorRef<ManagerStore.Command> store() {
        Cluster cluster = Cluster.get(kit.system());
        cluster.manager().tell(Join.create(cluster.selfMember().address())); // a cluster of one
        ActorRef<PoolDirectory.Command> forward = directory.ref();
        ClusterSharding.get(kit.system()).init(Entity.of(PoolDirectory.TYPE, entity -> forwarding(forward))
                .withRole(PoolCluster.MANAGER_ROLE));
        ManagerConfig config = new ManagerConfig(PoolFixture.LAYOUT, 16L * PoolFixture.LAYOUT.slotBytes(), null, 2,
                ManagerConfig.DEFAULT_DIRECTORY_SHARDS);
        return kit.spawn(ManagerStore.create(config, new PoolMetrics("copy-failed-test")), "pool-store");
    }

    private static Behavior<PoolDirectory.Command> forwarding(ActorRef<PoolDirectory.Command> to) {
        return Behaviors.receiveMessage(m -> {
            to.tell(m);
            return Behaviors.same();
        });
    }

    /** A stand-in for another store: it answers as a store would, naming a data address nothing listens on. */
    private ActorRef<ManagerStore.Command> unreachableStore() throws Exception {
        return unreachableStore("stand-in-store");
    }

    /** The same, named {@code name}. */
    private ActorRef<ManagerStore.Command> unreachableStore(String name) throws Exception {
        int nothingListens = PoolFixture.freePort();
        return kit.spawn(Behaviors.receiveMessage((ManagerStore.Command m) -> {
            if (m instanceof ManagerStore.GetStatus g) {
                g.replyTo().tell(new ManagerStore.StoreStatus("stand-in", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                        Map.of(), "127.0.0.1:" + nothingListens, 1, PoolFixture.LAYOUT.name()));
            }
            return Behaviors.same();
        }), name);
    }

    private PoolDirectory.CopyFailed expectCopyFailed(RecordKey key) {
        List<PoolDirectory.Command> seen = directory.fishForMessage(Duration.ofSeconds(20),
                "the store's word that the copy of " + key + " failed", m ->
                        m instanceof PoolDirectory.CopyFailed f && f.key().equals(key)
                                ? FishingOutcomes.complete() : FishingOutcomes.continueAndIgnore());
        return (PoolDirectory.CopyFailed) seen.getLast();
    }

    private ManagerStore.StoreStatus status(ActorRef<ManagerStore.Command> store) {
        TestProbe<ManagerStore.StoreStatus> reply = kit.createTestProbe();
        store.tell(new ManagerStore.GetStatus(reply.ref()));
        return reply.expectMessageClass(ManagerStore.StoreStatus.class, Duration.ofSeconds(10));
    }

    /** Pushes a record of {@code spec} to {@code store} on its data plane, as a host would, and waits for its end. */
    private Pushed push(ActorRef<ManagerStore.Command> store, RecordSpec spec) throws Exception {
        return push(DataAddress.parse(status(store).dataAddress()), spec);
    }

    /** Pushes a record of {@code spec} to the data plane at {@code address} and waits for its end. */
    private static Pushed push(DataAddress address, RecordSpec spec) throws Exception {
        int pieces = PoolFixture.LAYOUT.slotsPerRecord(spec.hasRow());
        try (HostMemory memory = HostMemory.allocate(PoolFixture.LAYOUT, pieces);
             NettyDataPlane client = NettyDataPlane.client(NettyDataPlane.Backend.best(),
                     NettyDataPlane.DEFAULT_SILENCE, 1)) {
            int page = PoolFixture.LAYOUT.pageBytes();
            for (int slot = 0; slot < pieces; slot++) {
                for (int rank = 0; rank < PoolFixture.LAYOUT.ranks(); rank++) {
                    memory.share(slot, rank, page).fill((byte) (slot * 7 + rank + 1));
                }
            }
            PieceShares shares = (piece, rank) -> memory.share(piece, rank, page);
            RecordImage.Frame frame = RecordImage.frame(spec, PoolFixture.LAYOUT, shares);
            return client.push(address, spec, new OutgoingImage(PoolFixture.LAYOUT, spec.hasRow(),
                    frame.headerBlock(), frame.footerBlock(), shares)).done().get(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void aCopyOfARecordNotHeld_isToldToItsDirectoryEntityAtOnce_theEntityIsAProbe() throws Exception {
        ActorRef<ManagerStore.Command> store = store();
        RecordKey key = new RecordKey("tenant-a", 41);

        store.tell(new ManagerStore.CopyTo(key, unreachableStore()));

        assertEquals(store, expectCopyFailed(key).store(), "the word names the store that was asked");
    }

    @Test
    void aCopyWhoseTargetCannotBeReached_isToldToItsDirectoryEntity_andTheRecordStaysHeld_theTargetIsAStandIn()
            throws Exception {
        ActorRef<ManagerStore.Command> store = store();
        RecordSpec spec = PoolFixture.spec("tenant-a", 42, null);
        push(store, spec);
        assertEquals(1, status(store).records(), "the store holds the pushed record");

        store.tell(new ManagerStore.CopyTo(spec.key(), unreachableStore()));

        assertEquals(store, expectCopyFailed(spec.key()).store(), "the word names the store that was asked");
        assertEquals(1, status(store).records(), "a failed copy leaves its source's record");
    }

    /** A second real store in this test's system, to hand records to. */
    private ActorRef<ManagerStore.Command> otherStore() {
        ManagerConfig config = new ManagerConfig(PoolFixture.LAYOUT, 16L * PoolFixture.LAYOUT.slotBytes(), null, 2,
                ManagerConfig.DEFAULT_DIRECTORY_SHARDS);
        return kit.spawn(ManagerStore.create(config, new PoolMetrics("hand-off-target")), "other-pool-store");
    }

    @Test
    void aStoreHandingOffAsItsManagerStops_triesTheNextStoreWhenOneCannotBeReached_andRefusesUploads_standIns()
            throws Exception {
        // The stand-ins: the directory entity (a probe, which names the records to hand over) and the first target
        // (a store whose data address nothing listens on). The second target is a real store.
        ActorRef<ManagerStore.Command> store = store();
        ActorRef<ManagerStore.Command> other = otherStore();
        // Stores of one node rank by their paths for every key: this name puts the unreachable one first.
        ActorRef<ManagerStore.Command> unreachable = unreachableStore("an-unreachable-store");
        RecordSpec spec = PoolFixture.spec("tenant-a", 43, null);
        assertEquals(unreachable, Placement.ranked(spec.key(), List.of(other, unreachable)).getFirst());
        push(store, spec);

        TestProbe<ManagerStore.HandedOff> handedOff = kit.createTestProbe();
        store.tell(new ManagerStore.HandOff(handedOff.ref()));
        PoolDirectory.Leaving leaving = fishLeaving(Duration.ofSeconds(20));
        assertEquals(store, leaving.store());
        leaving.replyTo().tell(new PoolDirectory.LeavingReply(List.of(spec.key()), List.of(other, unreachable),
                false));

        assertEquals(new ManagerStore.HandedOff(1, 1, 0),
                handedOff.expectMessageClass(ManagerStore.HandedOff.class, Duration.ofSeconds(30)));
        assertEquals(1, status(other).records(), "the second target took the record");
        ExecutionException refused = assertThrows(ExecutionException.class,
                () -> push(store, PoolFixture.spec("tenant-a", 1_000_000, null)));
        assertTrue(refused.getCause().getMessage().contains(ManagerStore.STOPPING), refused.getCause().getMessage());
        assertEquals(1, status(store).records(), "no upload taken once the hand-off began");
    }

    @Test
    void aHandOff_handsOverARecordWhoseUploadWasInProgress_andAnswersOnceItLanded_theUploadIsHeldByAProxy()
            throws Exception {
        ActorRef<ManagerStore.Command> store = store();
        ActorRef<ManagerStore.Command> other = otherStore();
        DataAddress address = DataAddress.parse(status(store).dataAddress());
        RecordSpec spec = PoolFixture.spec("tenant-a", 45, null);
        try (HoldingProxy proxy = new HoldingProxy(address, 2048)) {
            CompletableFuture<Pushed> pushed = CompletableFuture.supplyAsync(() -> {
                try {
                    return push(new DataAddress("127.0.0.1", proxy.port()), spec);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20))
                    .until(() -> status(store).uploading() == 1);

            TestProbe<ManagerStore.HandedOff> handedOff = kit.createTestProbe();
            store.tell(new ManagerStore.HandOff(handedOff.ref()));
            // asked at once (the upload's namespace too), with nothing to hand over yet
            fishLeaving(Duration.ofSeconds(20)).replyTo().tell(new PoolDirectory.LeavingReply(List.of(),
                    List.of(other), false));
            handedOff.expectNoMessage(Duration.ofMillis(1500)); // not while the upload is in progress

            proxy.release();
            pushed.get(20, TimeUnit.SECONDS);
            PoolDirectory.Leaving again = fishLeaving(Duration.ofSeconds(20));
            assertEquals(1, status(store).records(), "asked again once the record landed");
            again.replyTo().tell(new PoolDirectory.LeavingReply(List.of(spec.key()), List.of(other), false));
            assertEquals(new ManagerStore.HandedOff(1, 1, 0),
                    handedOff.expectMessageClass(ManagerStore.HandedOff.class, Duration.ofSeconds(20)));
            assertEquals(1, status(other).records(), "the record that was landing was handed over");
        }
    }

    @Test
    void aHandOffCutShort_saysHowFarItGot_andStartsNoMoreCopies_theEntityIsAProbe() throws Exception {
        ActorRef<ManagerStore.Command> store = store();
        ActorRef<ManagerStore.Command> other = otherStore();
        RecordSpec spec = PoolFixture.spec("tenant-a", 46, null);
        push(store, spec);
        try (LogCapture log = new LogCapture(ManagerStore.class)) {
            TestProbe<ManagerStore.HandedOff> handedOff = kit.createTestProbe();
            store.tell(new ManagerStore.HandOff(handedOff.ref()));
            // The entity answers a first page with nothing in it and says more follow; the next question is left
            // unanswered.
            fishLeaving(Duration.ofSeconds(20)).replyTo().tell(new PoolDirectory.LeavingReply(List.of(),
                    List.of(other), true));
            fishLeaving(Duration.ofSeconds(20));
            store.tell(new ManagerStore.HandOffCutShort(Duration.ofSeconds(7)));
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !log.warnLines().isEmpty());
            assertEquals(List.of("pool store: the hand-off ran out of its 7 s: 0 of the 0 records found that no other "
                    + "manager held were copied (0 still to copy or being copied; 1 directory shards had not finished "
                    + "answering); the rest leave with this manager"), log.warnLines());
            handedOff.expectNoMessage(Duration.ofSeconds(6)); // not even when the unanswered question times out
            assertEquals(0, status(other).records(), "no copy started");
        }
    }

    private PoolDirectory.Leaving fishLeaving(Duration within) {
        List<PoolDirectory.Command> seen = directory.fishForMessage(within,
                "the store's question which records only it holds", m -> m instanceof PoolDirectory.Leaving
                        ? FishingOutcomes.complete() : FishingOutcomes.continueAndIgnore());
        return (PoolDirectory.Leaving) seen.getLast();
    }

    /**
     * A fault-injecting TCP proxy on loopback for one connection: it forwards the client's first {@code limit} bytes
     * and holds the rest until {@link #release()}; the server's answers pass at once.
     */
    private static final class HoldingProxy implements AutoCloseable {
        private final java.net.ServerSocket listener;
        private final java.util.concurrent.CountDownLatch released = new java.util.concurrent.CountDownLatch(1);
        private final List<java.net.Socket> sockets = new java.util.concurrent.CopyOnWriteArrayList<>();

        HoldingProxy(DataAddress server, int limit) throws java.io.IOException {
            listener = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
            Thread.ofVirtual().start(() -> {
                try {
                    java.net.Socket client = listener.accept();
                    java.net.Socket upstream = new java.net.Socket(server.host(), server.port());
                    sockets.add(client);
                    sockets.add(upstream);
                    Thread.ofVirtual().start(() -> copy(upstream, client, Long.MAX_VALUE));
                    copy(client, upstream, limit);
                } catch (java.io.IOException e) {
                    // closed by the test
                }
            });
        }

        int port() {
            return listener.getLocalPort();
        }

        void release() {
            released.countDown();
        }

        /** Copies from {@code in} to {@code out}, holding after {@code limit} bytes until released. */
        private void copy(java.net.Socket in, java.net.Socket out, long limit) {
            byte[] buffer = new byte[8192];
            long sent = 0;
            try {
                while (true) {
                    int want = sent < limit ? (int) Math.min(buffer.length, limit - sent) : buffer.length;
                    int n = in.getInputStream().read(buffer, 0, want);
                    if (n < 0) {
                        out.shutdownOutput();
                        return;
                    }
                    out.getOutputStream().write(buffer, 0, n);
                    sent += n;
                    if (sent == limit) {
                        released.await();
                    }
                }
            } catch (java.io.IOException | InterruptedException e) {
                // closed by the test
            }
        }

        @Override
        public void close() throws java.io.IOException {
            release();
            listener.close();
            for (java.net.Socket s : sockets) {
                s.close();
            }
        }
    }
}
