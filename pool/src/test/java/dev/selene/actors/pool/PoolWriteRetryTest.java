package dev.selene.actors.pool;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.cache.HostCache;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.PublishResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * On a node whose only durable tier is the pool, a retirement that fails (a manager paused or restarting: injected by
 * a test double of the pool) is tried again after growing pauses, the record kept in memory meanwhile, instead of
 * being dropped after a second immediate try.
 */
class PoolWriteRetryTest {

    private static final Layout LAYOUT = Layout.small();

    @Test
    void aRetirementThatFailsThreeTimes_fakePool_isTriedAgain_andTheRecordIsRetired_notDropped() throws Exception {
        FakePoolTier pool = new FakePoolTier();
        pool.failingWrites.set(3);
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 64L * LAYOUT.slotBytes()).withConcurrency(2)
                .withPool(List.of("127.0.0.1:1"));
        try (SimulatedDevice device = SimulatedDevice.create();
             SeleneCache cache = SeleneCache.start(config, HostCache.Parts.of(device).withRemoteTier(pool))) {
            RecordSpec spec = new RecordSpec(new RecordKey("retry", 1), null, true);
            long base = device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true));
            DevicePlacement snapshot = DevicePlacement.contiguous(LAYOUT, base, true);
            KeyedContent.fillRecord(device, LAYOUT, snapshot, spec.key(), true);
            assertInstanceOf(PublishResult.Stored.class, cache.publish(spec, snapshot).toCompletableFuture()
                    .get(20, TimeUnit.SECONDS));

            DrainReport drained = cache.drain(Duration.ofSeconds(30)).toCompletableFuture().get(40, TimeUnit.SECONDS);
            assertEquals(1, drained.written(), "retired on the fourth try: " + drained);
            assertEquals(0, drained.skipped());
            assertEquals(4, pool.writes.get(spec.key()).get(), "three failed tries, then the one taken");
            assertEquals(0, cache.counters().get("spill.dropped"), "nothing dropped");
            device.freeDevice(base);
        }
    }
}
