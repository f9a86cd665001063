package dev.selene.actors.cache;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.AbandonReason;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.CopyMode;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.FaultInjectingCudaDriver;
import dev.selene.transport.gpu.JCudaDeviceCopier;
import dev.selene.transport.gpu.KeyedContent;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node on the JCuda copier whose CUDA context fails while it serves (a device-side failure injected into the
 * emulated driver, sticky for the whole context as on a GPU): the node stops using the device and refuses
 * publications and restores at once, saying why.
 */
class DeviceFailureTest {

    private static final Layout LAYOUT = Layout.small();

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    private static RecordSpec spec(long k) {
        return new RecordSpec(new RecordKey("device-failure", k), null, true);
    }

    private static DevicePlacement snapshot(JCudaDeviceCopier copier, RecordSpec s) {
        DevicePlacement p = DevicePlacement.contiguous(LAYOUT,
                copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true)), true);
        KeyedContent.fillRecord(copier, LAYOUT, p, s.key(), true);
        return p;
    }

    @Test
    void aFailedCudaContext_faultInjected_makesTheNodeRefusePublicationsAndRestoresAtOnceSayingWhy()
            throws Exception {
        FaultInjectingCudaDriver driver = new FaultInjectingCudaDriver();
        CacheConfig config = CacheConfig.memoryOnly(LAYOUT, 32 * LAYOUT.slotBytes()).withConcurrency(1);
        try (JCudaDeviceCopier copier = driver.copier(CopyMode.KERNEL_DIRECT);
             SeleneCache cache = SeleneCache.start(config, copier)) {
            RecordSpec kept = spec(1);
            assertInstanceOf(PublishResult.Stored.class, await(cache.publish(kept, snapshot(copier, kept))));
            DevicePlacement target = DevicePlacement.contiguous(LAYOUT,
                    copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true)), true);

            RecordSpec failing = spec(2);
            DevicePlacement failingSnapshot = snapshot(copier, failing);
            driver.failNextDeviceOperation("CUDA_ERROR_ILLEGAL_ADDRESS"); // the publication's copy fails
            PublishResult failed = await(cache.publish(failing, failingSnapshot));
            assertInstanceOf(PublishResult.Failed.class, failed, "its copy failed on the device");
            assertFalse(copier.isAvailable(), "the copier says its context failed");

            RestoreResult restore = await(cache.restore("device-failure", new long[] {kept.key().hash()},
                    List.of(target), Duration.ofHours(1)));
            assertEquals(RestoreResult.Outcome.FAILED, restore.outcome());
            assertTrue(restore.detail().startsWith("the device copier is unusable: the CUDA context of")
                    && restore.detail().contains("CUDA_ERROR_ILLEGAL_ADDRESS"), restore.detail());
            assertFalse(restore.detail().contains("\n"), "one line");

            await(cache.status()); // the counts so far taken: a refusal is told to the node, not asked
            long failedBefore = cache.counters().get("publish.failed");
            long abandonedBefore = cache.counters().get("abandoned.copy_failed");
            long restoresFailedBefore = cache.counters().get("restore.failed");
            RecordSpec next = spec(3);
            PublishResult refused = await(cache.publish(next, DevicePlacement.contiguous(LAYOUT, 4096, true)));
            PublishResult.Failed f = assertInstanceOf(PublishResult.Failed.class, refused);
            assertEquals(AbandonReason.COPY_FAILED.label(), f.reason());
            assertTrue(f.detail().startsWith("the device copier is unusable:"), f.detail());
            await(cache.restore("device-failure", new long[] {kept.key().hash()}, List.of(target),
                    Duration.ofHours(1)));
            await(cache.status()); // the node has taken the refusals' counts: they were told to it first
            assertEquals(failedBefore + 1, cache.counters().get("publish.failed"), "the refused publication counted");
            assertEquals(abandonedBefore + 1, cache.counters().get("abandoned.copy_failed"));
            assertEquals(restoresFailedBefore + 1, cache.counters().get("restore.failed"), "the refused restore "
                    + "counted");

            assertEquals(1, await(cache.lookup("device-failure", new long[] {kept.key().hash()})).depth(),
                    "lookups still answer: the record is held, only the device is lost");
        }
    }
}
