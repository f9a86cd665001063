package dev.selene.actors.cache;

import com.typesafe.config.ConfigFactory;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.EvictOutcome;
import dev.selene.actors.value.ExpiryReport;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RecordDescription;
import dev.selene.actors.value.RecordPage;
import dev.selene.actors.value.RecordView;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
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
 * Max age in the memory tier, driven by Pekko's manual time: the sweep timer fires only when the test
 * advances time, and the tier reads last uses from a clock the test advances together with it.
 */
class CatalogExpiryTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "exp";
    private static final int TOTAL_SLOTS = 2048;
    private static final Duration MAX_AGE = Duration.ofMinutes(5);

    private final ActorTestKit kit = ActorTestKit.create(ManualTime.config()
            .withFallback(ConfigFactory.load("application-test")));
    private final ManualTime manualTime = ManualTime.get(kit.system());
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final SimulatedDevice device = SimulatedDevice.create();
    private final HostMemory host = HostMemory.allocate(LAYOUT, TOTAL_SLOTS);
    private final CacheCounters counters = new CacheCounters();
    private final CacheMetrics metrics = CacheMetrics.forNode("catalog_expiry_test", counters);
    private final TraceBook traces = new TraceBook(1024);
    private final List<Long> deviceAllocations = new ArrayList<>();
    private ActorRef<Catalog.Command> tier;
    private long elapsedNanos;

    @AfterEach
    void stop() {
        invariantsHold();
        kit.shutdownTestKit();
        metrics.close();
        deviceAllocations.forEach(device::freeDevice);
        device.close();
        host.close();
    }

    private void start(Duration maxAge) {
        device.register(host);
        RecordContext ctx = new RecordContext(LAYOUT, host, device, metrics, traces);
        Catalog.Settings settings = new Catalog.Settings(0, 4, maxAge, clock::get, () -> { });
        tier = kit.spawn(Catalog.create(ctx, new Catalog.SlotShape(TOTAL_SLOTS, 64), null, null, settings));
    }

    /**
     * Advances the tier's clock and Pekko's scheduler together, in steps that end on each sweep tick (a minute
     * apart from the tier's start), so every sweep sees its own time.
     */
    private void advance(Duration d) {
        long minute = Duration.ofMinutes(1).toNanos();
        long remaining = d.toNanos();
        while (remaining > 0) {
            long step = Math.min(remaining, minute - elapsedNanos % minute);
            clock.addAndGet(step);
            manualTime.timePasses(Duration.ofNanos(step));
            elapsedNanos += step;
            remaining -= step;
            // A tick is a message: let the tier handle it (and read the clock) before the clock moves on.
            TestProbe<String> synced = kit.createTestProbe();
            tier.tell(new Catalog.CheckInvariants(synced.ref()));
            assertEquals("", synced.receiveMessage());
        }
    }

    private static RecordKey key(long n) {
        return new RecordKey(NS, n);
    }

    private void publish(long k, Long parent, boolean hasRow) {
        RecordSpec spec = new RecordSpec(key(k), parent == null ? null : key(parent), hasRow);
        long base = device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, hasRow));
        deviceAllocations.add(base);
        TestProbe<PublishResult> probe = kit.createTestProbe();
        tier.tell(new Catalog.Publish(spec, DevicePlacement.contiguous(LAYOUT, base, hasRow), Duration.ZERO,
                probe.ref(), 1));
        assertInstanceOf(PublishResult.Stored.class, probe.receiveMessage(Duration.ofSeconds(10)));
    }

    /** Publishes the chain first..last (row at the end). */
    private void publishChain(long first, long last) {
        for (long k = first; k <= last; k++) {
            publish(k, k == first ? null : k - 1, k == last);
        }
    }

    private List<Long> resident() {
        TestProbe<RecordPage> probe = kit.createTestProbe();
        tier.tell(new Catalog.ListRecords(null, null, 0, 10_000, probe.ref()));
        return probe.receiveMessage().records().stream().map(v -> v.key().hash()).sorted().toList();
    }

    private ExpiryReport expireNow() {
        TestProbe<ExpiryReport> probe = kit.createTestProbe();
        tier.tell(new Catalog.ExpireNow(probe.ref()));
        return probe.receiveMessage();
    }

    private CacheStatus slotStats() {
        TestProbe<CacheStatus> probe = kit.createTestProbe();
        tier.tell(new Catalog.GetStatus(probe.ref()));
        return probe.receiveMessage();
    }

    /** Uses the deepest record again (a duplicate publication refreshes it and its ancestors' last use). */
    private void useChain(long... chain) {
        long deepest = chain[chain.length - 1];
        RecordSpec spec = new RecordSpec(key(deepest), key(chain[chain.length - 2]), true);
        TestProbe<PublishResult> probe = kit.createTestProbe();
        tier.tell(new Catalog.Publish(spec, DevicePlacement.contiguous(LAYOUT, 0, true), Duration.ZERO, probe.ref(),
                2));
        assertInstanceOf(PublishResult.Present.class, probe.receiveMessage());
    }

    private void invariantsHold() {
        if (tier != null) {
            TestProbe<String> probe = kit.createTestProbe();
            tier.tell(new Catalog.CheckInvariants(probe.ref()));
            assertEquals("", probe.receiveMessage());
        }
    }

    @Test
    void maxAgeOff_neverSweeps() {
        start(null);
        publishChain(1, 3);
        advance(Duration.ofMinutes(10));
        assertEquals(List.of(1L, 2L, 3L), resident());
        ExpiryReport report = expireNow();
        assertFalse(report.enabled());
        assertEquals(List.of(), report.removed());
        assertEquals(0, counters.get("expired.memory"));
    }

    @Test
    void sweep_runsOnceAMinute_andRemovesOnlyRecordsOlderThanMaxAge() {
        start(MAX_AGE);
        publishChain(1, 3);
        advance(Duration.ofMinutes(3));
        publishChain(10, 11);
        advance(Duration.ofSeconds(150)); // t = 5.5 min: the sweep at t = 5 min saw chain 1..3 exactly at max age
        assertEquals(List.of(1L, 2L, 3L, 10L, 11L), resident());
        advance(Duration.ofSeconds(30)); // t = 6 min: the next sweep removes 1..3
        assertEquals(List.of(10L, 11L), resident());
        assertEquals(3, counters.get("expired.memory"));
        advance(Duration.ofMinutes(3)); // t = 9 min: 10..11, published at 3 min, are now past max age
        assertEquals(List.of(), resident());
        assertEquals(5, counters.get("expired.memory"));
        CacheStatus stats = slotStats();
        assertEquals(stats.totalSlots(), stats.freeSlots(), "every expired record's slots are back in the pool");
        assertEquals(0, stats.cleanSlots());
        String last = traces.trace(key(1)).orElseThrow().getLast().message();
        assertTrue(last.startsWith("Expired"), last);
    }

    @Test
    void aUse_refreshesTheChain_soItOutlivesAnUnusedOne() {
        start(MAX_AGE);
        publishChain(1, 3);
        publishChain(20, 21);
        advance(Duration.ofMinutes(4));
        useChain(1, 2, 3); // touches 3 and refreshes its ancestors 1 and 2
        advance(Duration.ofMinutes(2)); // t = 6 min
        assertEquals(List.of(1L, 2L, 3L), resident());
        advance(Duration.ofMinutes(4)); // t = 10 min: 6 min since the use
        assertEquals(List.of(), resident());
    }

    @Test
    void aChildsPublication_refreshesItsAncestors_soOnlyTheUnusedChainExpires() {
        start(MAX_AGE);
        publishChain(1, 2);
        publishChain(20, 21);
        advance(Duration.ofMinutes(4));
        publish(3, 2L, true); // a new turn of conversation 1..2: 1 and 2 are used again through it
        advance(Duration.ofMinutes(2)); // t = 6 min: 1 and 2 were published 6 min ago, their child 2 min ago
        assertEquals(List.of(1L, 2L, 3L), resident());
        assertEquals(2, counters.get("expired.memory"), "only the unused chain 20..21");
        advance(Duration.ofMinutes(4)); // t = 10 min: 6 min since the child's publication
        assertEquals(List.of(), resident());
    }

    @Test
    void aSweep_takesOnlyStaleLeaves_oldestFirst() {
        start(MAX_AGE);
        publishChain(1, 3);
        clock.addAndGet(Duration.ofMinutes(1).toNanos());
        publishChain(40, 41);
        clock.addAndGet(MAX_AGE.plusSeconds(1).toNanos());
        publishChain(30, 31); // fresh beside the stale ones
        ExpiryReport report = expireNow();
        assertEquals(List.of(key(3), key(2), key(1), key(41), key(40)), report.removed());
        assertEquals(List.of(30L, 31L), resident());
    }

    @Test
    void aSweep_removesAtMost64Records_andTheNextOneContinues() {
        start(MAX_AGE);
        for (long k = 100; k < 200; k++) {
            publish(k, null, true);
        }
        clock.addAndGet(MAX_AGE.plusSeconds(1).toNanos());
        ExpiryReport first = expireNow();
        assertEquals(64, first.removed().size());
        assertEquals(36, resident().size());
        advance(Duration.ofMinutes(1));
        assertEquals(List.of(), resident());
        assertEquals(100, counters.get("expired.memory"));
    }

    @Test
    void expireNow_removesDescendantsOfAStaleRecordFirst() {
        start(MAX_AGE);
        publishChain(1, 3);
        clock.addAndGet(MAX_AGE.plusMinutes(1).toNanos());
        publishChain(30, 31);
        ExpiryReport report = expireNow();
        assertEquals(List.of(key(3), key(2), key(1)), report.removed());
        assertEquals(List.of(30L, 31L), resident());
    }

    @Test
    void describeAndEvict_showTheChain_andRemoveDescendants() {
        start(null);
        publishChain(1, 3);
        TestProbe<RecordDescription> described = kit.createTestProbe();
        tier.tell(new Catalog.DescribeRecord(key(3), described.ref()));
        RecordDescription d = described.receiveMessage();
        assertEquals("resident", d.state());
        assertTrue(d.complete());
        assertEquals(List.of(1L, 2L, 3L), d.chain().stream().map(v -> v.key().hash()).toList());
        RecordView v = d.record();
        assertEquals(LAYOUT.slotsPerRecord(true), v.slots());

        TestProbe<EvictOutcome> evicted = kit.createTestProbe();
        tier.tell(new Catalog.EvictRecord(key(2), evicted.ref()));
        assertEquals(new EvictOutcome(EvictOutcome.Result.EVICTED, 2), evicted.receiveMessage());
        assertEquals(List.of(1L), resident());
        tier.tell(new Catalog.EvictRecord(key(2), evicted.ref()));
        assertEquals(EvictOutcome.Result.NOT_FOUND, evicted.receiveMessage().result());
        tier.tell(new Catalog.DescribeRecord(key(2), described.ref()));
        assertFalse(described.receiveMessage().found());
        CacheStatus stats = slotStats();
        assertEquals(LAYOUT.slotsPerRecord(false), stats.totalSlots() - stats.freeSlots());
    }
}
