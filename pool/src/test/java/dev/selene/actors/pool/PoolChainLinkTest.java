package dev.selene.actors.pool;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.cache.HostCache;
import dev.selene.actors.store.Store;
import dev.selene.actors.value.LookupResult;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * A match goes on into the pool only as far as each of the pool's records hangs from the one before it, as in the
 * node's own tiers. The pool here is a test double that answers each {@code Find} with a list the test chooses, so
 * that it can answer a chain with a broken link (a manager's stale or mixed-up answer).
 */
class PoolChainLinkTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "link";

    private static Store.Held held(long key, Long parent) {
        return new Store.Held(new RecordKey(NS, key), parent == null ? null : new RecordKey(NS, parent), true,
                LAYOUT.recordBytes(true));
    }

    private static List<Long> keys(LookupResult r) {
        List<Long> out = new ArrayList<>();
        r.records().forEach(l -> out.add(l.key().hash()));
        return out;
    }

    @Test
    void aPoolAnswerWithABrokenLink_fakePool_endsTheMatchWhereTheLinkBreaks() throws Exception {
        FakePoolTier pool = new FakePoolTier();
        AtomicReference<List<Store.Held>> answer = pool.found;
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 64L * LAYOUT.slotBytes()).withConcurrency(2)
                .withPool(List.of("127.0.0.1:1"));
        List<Long> allocations = new ArrayList<>();
        try (SimulatedDevice device = SimulatedDevice.create();
             SeleneCache cache = SeleneCache.start(config, HostCache.Parts.of(device)
                     .withRemoteTier(pool))) {
            RecordSpec root = new RecordSpec(new RecordKey(NS, 1), null, true);
            long base = device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true));
            allocations.add(base);
            DevicePlacement snapshot = DevicePlacement.contiguous(LAYOUT, base, true);
            KeyedContent.fillRecord(device, LAYOUT, snapshot, root.key(), true);
            assertInstanceOf(PublishResult.Stored.class, await(cache.publish(root, snapshot)));

            // linked: 2 hangs from the node's 1, 3 from 2
            answer.set(List.of(held(2, 1L), held(3, 2L)));
            assertEquals(List.of(1L, 2L, 3L), keys(await(cache.lookup(NS, new long[] {1, 2, 3}))));

            // 3 names another parent: the match ends at 2
            answer.set(List.of(held(2, 1L), held(3, 99L)));
            assertEquals(List.of(1L, 2L), keys(await(cache.lookup(NS, new long[] {1, 2, 3}))));

            // the pool's first record hangs from another record than the node's last: nothing of the pool's counts
            answer.set(List.of(held(2, 7L), held(3, 2L)));
            assertEquals(List.of(1L), keys(await(cache.lookup(NS, new long[] {1, 2, 3}))));
            allocations.forEach(device::freeDevice);
        }
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
}
