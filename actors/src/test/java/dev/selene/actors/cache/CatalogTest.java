package dev.selene.actors.cache;

import com.typesafe.config.ConfigFactory;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.ExpiryReport;
import dev.selene.actors.value.LookupResult;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.Tier;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The catalog actor on its own: probes stand in for its record actors (every record actor it spawns forwards what it
 * is told to one probe, and the test answers as the record actor would) and for the disk store. Publications granted
 * their slots, a publication waiting for slots until a spill frees them, lookups, a drain's order, an expiry sweep;
 * after each, the catalog's invariants (its records and its slots) hold.
 */
class CatalogTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "cat";
    private static final int TOTAL_SLOTS = 64;

    /** What one of the catalog's record actors was told. */
    private record Told(ActorRef<RecordActor.Command> actor, RecordActor.Command command) {
    }

    private final ActorTestKit kit = ActorTestKit.create(ConfigFactory.load("application-test"));
    private final SimulatedDevice device = SimulatedDevice.create();
    private final HostMemory host = HostMemory.allocate(LAYOUT, TOTAL_SLOTS);
    private final CacheCounters counters = new CacheCounters();
    private final CacheMetrics metrics = CacheMetrics.forNode("catalog_test", counters);
    private final TraceBook traces = new TraceBook(1024);
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final TestProbe<Told> recordActors = kit.createTestProbe();
    private final TestProbe<Store.Command> disk = kit.createTestProbe();
    /** Messages to record actors received from the probe but not yet taken by the test. */
    private final List<Told> told = new ArrayList<>();
    private ActorRef<Catalog.Command> catalog;

    @AfterEach
    void stop() {
        if (catalog != null) {
            assertEquals("", invariantViolation(), "the catalog's invariants hold");
        }
        kit.shutdownTestKit();
        metrics.close();
        device.close();
        host.close();
    }

    private String invariantViolation() {
        TestProbe<String> probe = kit.createTestProbe();
        catalog.tell(new Catalog.CheckInvariants(probe.ref()));
        return probe.receiveMessage();
    }

    /** A record actor that only tells the probe what it is told, with its own reference. */
    private Behavior<RecordActor.Command> recordActorProbe() {
        return Behaviors.setup(ctx -> Behaviors.receiveMessage(m -> {
            recordActors.ref().tell(new Told(ctx.getSelf(), m));
            return Behaviors.same();
        }));
    }

    /** Starts a catalog of {@code total} slots ({@code intake} of them intake), with the disk probe when asked. */
    private void start(int total, int intake, boolean withDisk, Duration maxAge) {
        device.register(host);
        RecordContext records = new RecordContext(LAYOUT, host, device, metrics, traces, FaultInjection.NONE,
                RecordContext.DEFAULT_WRITE_CHECK, clock::get, new DeviceTransfers());
        Catalog.Settings settings = new Catalog.Settings(withDisk ? 1L << 30 : 0, 4, maxAge, clock::get, () -> { });
        catalog = kit.spawn(Catalog.create(records, new Catalog.SlotShape(total, intake), withDisk ? disk.ref() : null,
                null, settings, (r, c, s) -> recordActorProbe()));
        if (withDisk) {
            catalog.tell(new Catalog.DiskRecovered(new DiskStore.Recovery(List.of(), 0, 0, 0, 1L << 40)));
        }
    }

    private static RecordKey key(long k) {
        return new RecordKey(NS, k);
    }

    private static RecordSpec spec(long k, Long parent) {
        return new RecordSpec(key(k), parent == null ? null : key(parent), true);
    }

    private static int slotsOf(RecordSpec s) {
        return s.slots(LAYOUT);
    }

    private TestProbe<PublishResult> publish(RecordSpec s, Duration patience) {
        TestProbe<PublishResult> publisher = kit.createTestProbe();
        catalog.tell(new Catalog.Publish(s, DevicePlacement.contiguous(LAYOUT, 0, s.hasRow()), patience,
                publisher.ref(), 1));
        return publisher;
    }

    /** The next message of {@code type} about {@code key} to a record actor (others are kept for later). */
    private <T extends RecordActor.Command> Told next(Class<T> type, RecordKey key) {
        for (int i = 0; ; i++) {
            for (Told t : told) {
                if (type.isInstance(t.command()) && key.equals(keyOf(t.command()))) {
                    told.remove(t);
                    return t;
                }
            }
            told.add(recordActors.receiveMessage(Duration.ofSeconds(5)));
        }
    }

    private static RecordKey keyOf(RecordActor.Command c) {
        return switch (c) {
            case RecordActor.Publish p -> p.spec().key();
            case RecordActor.Spill s -> s.spec().key();
            default -> null;
        };
    }

    /** Whatever reaches the record actors within {@code d}, kept for {@link #next}. */
    private void collect(Duration d) {
        long end = System.nanoTime() + d.toNanos();
        while (System.nanoTime() < end) {
            try {
                told.add(recordActors.receiveMessage(Duration.ofMillis(50)));
            } catch (AssertionError timeout) {
                // nothing more yet
            }
        }
    }

    /** Answers a publication's record actor as a real one does once its copy has completed. */
    private void copied(Told t) {
        RecordActor.Publish p = (RecordActor.Publish) t.command();
        catalog.tell(new Catalog.Resident(p.spec(), p.slots(), 4096L * p.slots().count(), p.replyTo(), t.actor(),
                p.correlation()));
    }

    /** Publishes {@code s} with no patience and answers as its record actor; the publisher is told Stored. */
    private Told publishResident(RecordSpec s) {
        TestProbe<PublishResult> publisher = publish(s, Duration.ZERO);
        Told t = next(RecordActor.Publish.class, s.key());
        copied(t);
        assertInstanceOf(PublishResult.Stored.class, publisher.receiveMessage());
        return t;
    }

    private void committed(Told spill) {
        RecordActor.Spill s = (RecordActor.Spill) spill.command();
        catalog.tell(new Catalog.Committed(s.spec().key(), 4096L * s.slots().count(), 1_000, spill.actor()));
    }

    private CacheStatus status() {
        TestProbe<CacheStatus> probe = kit.createTestProbe();
        catalog.tell(new Catalog.GetStatus(probe.ref()));
        return probe.receiveMessage();
    }

    @Test
    void publication_isGrantedItsSlotsInTheMessageThatStartsItsWork_andIsStoredOnceResident() {
        start(TOTAL_SLOTS, 8, false, null);
        RecordSpec s = spec(1, null);
        TestProbe<PublishResult> publisher = publish(s, Duration.ZERO);
        Told t = next(RecordActor.Publish.class, s.key());
        RecordActor.Publish p = (RecordActor.Publish) t.command();
        assertEquals(slotsOf(s), p.slots().count(), "the record's slots come with its work");
        assertEquals(TOTAL_SLOTS - slotsOf(s), status().freeSlots(), "booked by the catalog at once");
        publisher.expectNoMessage(Duration.ofMillis(50));
        copied(t);
        assertInstanceOf(PublishResult.Stored.class, publisher.receiveMessage());
        CacheStatus after = status();
        assertEquals(1, after.residentRecords());
        assertEquals(0, after.inFlight());
        assertEquals(TOTAL_SLOTS - slotsOf(s), after.freeSlots());
        assertTrue(traces.trace(s.key()).orElseThrow().stream()
                .anyMatch(e -> e.actor().equals("Catalog") && e.message().startsWith("Allocated")));
    }

    @Test
    void publicationThatDoesNotFit_andMayNotWait_isToldToRetry_andHoldsNoSlot() {
        int n = slotsOf(spec(1, null));
        start(n, n, false, null);
        publish(spec(1, null), Duration.ZERO);
        Told first = next(RecordActor.Publish.class, key(1)); // still copying: its slots cannot be dropped
        TestProbe<PublishResult> second = publish(spec(2, null), Duration.ZERO);
        assertInstanceOf(PublishResult.Retry.class, second.receiveMessage());
        assertEquals(1, status().inFlight(), "only the first is in flight");
        copied(first);
    }

    @Test
    void publicationWaitingForSlots_isGrantedWhenASpillFreesThem() {
        int n = slotsOf(spec(1, null));
        start(2 * n, n, true, null);
        Told a = publishResident(spec(1, null));
        Told spillA = next(RecordActor.Spill.class, key(1)); // pressure: free + clean fell below two intakes
        assertEquals(a.actor(), spillA.actor(), "the record's own actor writes it");
        publishResident(spec(2, null));
        next(RecordActor.Spill.class, key(2));

        TestProbe<PublishResult> waiting = publish(spec(3, null), Duration.ofSeconds(30));
        collect(Duration.ofMillis(300));
        assertFalse(told.stream().anyMatch(t -> key(3).equals(keyOf(t.command()))), "no slot is free: it waits");
        waiting.expectNoMessage(Duration.ofMillis(10));
        assertEquals(0, status().freeSlots());

        committed(spillA); // record 1 is clean now: dropped for the waiting publication, its slots granted
        Told c = next(RecordActor.Publish.class, key(3));
        assertEquals(n, ((RecordActor.Publish) c.command()).slots().count());
        copied(c);
        assertInstanceOf(PublishResult.Stored.class, waiting.receiveMessage());
        assertEquals(1, counters.get("evicted.memory"));
    }

    @Test
    void publicationWhoseLeaseEndsWhileWaiting_isAbandoned_andItsPlaceInLineGoes() {
        int n = slotsOf(spec(1, null));
        start(n, n, false, null);
        publish(spec(1, null), Duration.ZERO);
        Told first = next(RecordActor.Publish.class, key(1)); // still copying: its slots cannot be dropped
        TestProbe<PublishResult> waiting = publish(spec(2, null), Duration.ofMillis(200));
        PublishResult.Abandoned abandoned = assertInstanceOf(PublishResult.Abandoned.class,
                waiting.receiveMessage(Duration.ofSeconds(5)));
        assertEquals("no_space", abandoned.reason());
        assertEquals(1, counters.get("abandoned.no_space"));
        assertEquals(1, status().inFlight(), "only the first is in flight");
        copied(first);
        collect(Duration.ofMillis(100));
        assertTrue(told.isEmpty(), "the abandoned publication was never granted: " + told);
    }

    @Test
    void lookup_isAnsweredWithTheLongestCachedPrefix() {
        start(TOTAL_SLOTS, 8, false, null);
        publishResident(spec(1, null));
        publishResident(spec(2, 1L));
        publishResident(spec(3, 2L));
        TestProbe<LookupResult> probe = kit.createTestProbe();
        catalog.tell(new Catalog.Lookup(NS, new long[] {1, 2, 3, 4, 5}, probe.ref()));
        LookupResult r = probe.receiveMessage();
        assertEquals(List.of(key(1), key(2), key(3)), r.records().stream().map(LookupResult.Located::key).toList());
        assertTrue(r.records().stream().allMatch(l -> l.tier() == Tier.MEMORY));
        assertEquals(3L * LAYOUT.tokensPerRecord(), r.tokens());
        catalog.tell(new Catalog.Lookup(NS, new long[] {9, 1}, probe.ref()));
        assertTrue(probe.receiveMessage().records().isEmpty(), "a chain whose first record is not here misses");
    }

    @Test
    void drain_spillsParentsBeforeChildren() {
        start(TOTAL_SLOTS, 4, true, null);
        publishResident(spec(1, null));
        publishResident(spec(2, 1L));
        publishResident(spec(3, 2L));
        TestProbe<DrainReport> drained = kit.createTestProbe();
        catalog.tell(new Catalog.Drain(Duration.ofSeconds(30), drained.ref()));
        Told root = next(RecordActor.Spill.class, key(1));
        collect(Duration.ofMillis(200));
        assertTrue(told.stream().noneMatch(t -> t.command() instanceof RecordActor.Spill),
                "no child is written before its parent's file commits: " + told);
        committed(root);
        Told child = next(RecordActor.Spill.class, key(2));
        committed(child);
        Told grandchild = next(RecordActor.Spill.class, key(3));
        committed(grandchild);
        assertEquals(new DrainReport(3, 0, false), drained.receiveMessage());
    }

    @Test
    void expirySweep_removesRecordsUnusedForLongerThanMaxAge_andFreesTheirSlots() {
        start(TOTAL_SLOTS, 8, false, Duration.ofMinutes(5));
        publishResident(spec(1, null));
        clock.addAndGet(Duration.ofMinutes(3).toNanos());
        publishResident(spec(10, null));
        clock.addAndGet(Duration.ofMinutes(3).toNanos()); // record 1 is 6 minutes old, record 10 3 minutes
        TestProbe<ExpiryReport> probe = kit.createTestProbe();
        catalog.tell(new Catalog.ExpireNow(probe.ref()));
        ExpiryReport r = probe.receiveMessage();
        assertTrue(r.enabled());
        assertEquals(List.of(key(1)), r.removed());
        CacheStatus s = status();
        assertEquals(1, s.residentRecords());
        assertEquals(TOTAL_SLOTS - slotsOf(spec(10, null)), s.freeSlots(), "the expired record's slots are free");
    }
}
