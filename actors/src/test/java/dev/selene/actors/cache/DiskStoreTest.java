package dev.selene.actors.cache;

import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.disk.RecordFileNames;
import dev.selene.transport.disk.RecordIo;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The disk store alone, over a real directory with O_DIRECT files, driven by probes: its protocol and restart. */
class DiskStoreTest {

    private static final Layout LAYOUT = Layout.small();
    private static final ActorTestKit KIT = ActorTestKit.create();

    private final HostMemory host = HostMemory.allocate(LAYOUT, 64);
    private final ExecutorService io = Executors.newFixedThreadPool(4);
    private final TestProbe<Object> started = KIT.createTestProbe();
    private final CacheMetrics metrics = CacheMetrics.forNode("disk_store_test", new CacheCounters());
    private Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        Path base = Path.of("target", "disk-store-tests");
        Files.createDirectories(base);
        dir = Files.createTempDirectory(base, "store");
    }

    @AfterEach
    void stop() {
        io.shutdownNow();
        host.close();
        metrics.close();
    }

    @org.junit.jupiter.api.AfterAll
    static void stopKit() {
        KIT.shutdownTestKit();
    }

    private Behavior<Store.Command> store(FaultInjection faults) {
        RecordIo recordIo = HostCache.DEFAULT_RECORD_IO.apply(io);
        return DiskStore.create(dir, LAYOUT, host, recordIo, io, metrics, new TraceBook(64), faults,
                started.ref()::tell);
    }

    private static RecordSpec spec(long k, Long parent) {
        return new RecordSpec(new RecordKey("ds", k), parent == null ? null : new RecordKey("ds", parent), true);
    }

    /** Fills {@code slots} with the keyed content of {@code s}, as a publication would have. */
    private SlotList filled(RecordSpec s, int first) {
        int n = LAYOUT.slotsPerRecord(true);
        int[] slots = new int[n];
        for (int i = 0; i < n; i++) {
            slots[i] = first + i;
        }
        SlotList list = SlotList.of(slots);
        for (int piece = 0; piece < n; piece++) {
            for (int rank = 0; rank < LAYOUT.ranks(); rank++) {
                KeyedContent.fill(host.share(list.slot(piece), rank, LAYOUT.pageBytes()),
                        KeyedContent.seed(s.key(), rank, piece));
            }
        }
        return list;
    }

    @Test
    void write_commitsAFile_readVerifiesItBack_deleteRemovesIt_andAScanFindsWhatIsLeft() {
        ActorRef<Store.Command> store = KIT.spawn(store(FaultInjection.NONE));
        assertTrue(((DiskStore.Recovery) started.receiveMessage()).records().isEmpty());
        RecordSpec root = spec(1, null);
        RecordSpec child = spec(2, 1L);
        TestProbe<Store.WriteReply> writes = KIT.createTestProbe();
        store.tell(new Store.Write(root, filled(root, 0), writes.ref()));
        assertInstanceOf(Store.Written.class, writes.receiveMessage(Duration.ofSeconds(10)));
        store.tell(new Store.Write(child, filled(child, 10), writes.ref()));
        assertInstanceOf(Store.Written.class, writes.receiveMessage(Duration.ofSeconds(10)));

        int n = LAYOUT.slotsPerRecord(true);
        SlotList staging = SlotList.of(IntStream.range(30, 30 + n).toArray());
        TestProbe<Store.ReadReply> reads = KIT.createTestProbe();
        store.tell(new Store.Read(child.key(), staging, reads.ref()));
        assertInstanceOf(Store.ReadDone.class, reads.receiveMessage(Duration.ofSeconds(10)));
        assertTrue(KeyedContent.verifyHostRecord(LAYOUT, host, staging, child.key(), true));

        store.tell(new Store.Delete(List.of(child.key())));
        store.tell(new Store.Read(child.key(), staging, reads.ref()));
        Store.ReadFailed gone = assertInstanceOf(Store.ReadFailed.class,
                reads.receiveMessage(Duration.ofSeconds(10)));
        assertTrue(gone.fileLost());
        assertFalse(Files.exists(RecordFileNames.recordFile(dir, child.key())));

        KIT.stop(store);
        KIT.spawn(store(FaultInjection.NONE));
        DiskStore.Recovery again = (DiskStore.Recovery) started.receiveMessage(Duration.ofSeconds(10));
        assertEquals(List.of(root.key()), again.records().stream().map(f -> f.spec().key()).toList());
    }

    @Test
    void settle_answersWithHowARecentWriteEnded_orThatNoneRan() {
        ActorRef<Store.Command> store = KIT.spawn(store(FaultInjection.NONE));
        started.receiveMessage();
        RecordSpec s = spec(5, null);
        TestProbe<Store.WriteReply> replies = KIT.createTestProbe();
        store.tell(new Store.Settle(s.key(), replies.ref()));
        assertInstanceOf(Store.NotWritten.class, replies.receiveMessage(), "no write of it ran");
        store.tell(new Store.Write(s, filled(s, 0), replies.ref()));
        store.tell(new Store.Settle(s.key(), replies.ref()));
        assertInstanceOf(Store.Written.class, replies.receiveMessage(Duration.ofSeconds(10)));
        assertInstanceOf(Store.Written.class, replies.receiveMessage(Duration.ofSeconds(10)));
        store.tell(new Store.Settle(s.key(), replies.ref()));
        assertInstanceOf(Store.Written.class, replies.receiveMessage(), "remembered after the write ended");
    }

    @Test
    void aSecondStoreOnTheSameDirectory_isRefusedWithTheLockHoldersLine() {
        KIT.spawn(store(FaultInjection.NONE));
        started.receiveMessage();
        KIT.spawn(store(FaultInjection.NONE));
        Object second = started.receiveMessage(Duration.ofSeconds(10));
        IllegalStateException e = assertInstanceOf(IllegalStateException.class, second);
        assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
    }

    @Test
    void aStoreThatFails_isRestartedByItsSupervisor_takesTheLockAgain_andScansAgain() {
        AtomicBoolean failNext = new AtomicBoolean();
        FaultInjection faults = (actor, message) -> {
            if (message instanceof Store.Delete && failNext.compareAndSet(true, false)) {
                throw new FailOnce.InjectedFault("fault injected in the disk store");
            }
        };
        ActorRef<Store.Command> store = KIT.spawn(Behaviors.supervise(store(faults))
                .onFailure(SupervisorStrategy.restartWithBackoff(Duration.ofMillis(10), Duration.ofMillis(100), 0)));
        started.receiveMessage();
        RecordSpec s = spec(7, null);
        TestProbe<Store.WriteReply> writes = KIT.createTestProbe();
        store.tell(new Store.Write(s, filled(s, 0), writes.ref()));
        writes.receiveMessage(Duration.ofSeconds(10));
        failNext.set(true);
        store.tell(new Store.Delete(List.of(s.key())));
        DiskStore.Recovery rescanned = (DiskStore.Recovery) started.receiveMessage(Duration.ofSeconds(10));
        assertEquals(List.of(s.key()), rescanned.records().stream().map(f -> f.spec().key()).toList(),
                "the failed delete never ran; the restarted store finds the file");
    }
}
