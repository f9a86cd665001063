package dev.selene.actors.api;

import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RecordPage;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.RetryReason;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What an application's bad arguments do through the Java API: each is its own failed call (or a thrown null check)
 * and the node goes on serving, where before each one reached the catalog or the node and stopped it.
 */
class ApiBadInputTest {

    private static final Layout LAYOUT = Layout.small();
    private static final String NS = "api";

    private static CacheConfig config() {
        return CacheConfig.memoryOnly(LAYOUT, 64L * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true)).withHostBudgetBytes(128L * LAYOUT.slotBytes());
    }

    private static DevicePlacement placement(SimulatedDevice device) {
        return DevicePlacement.contiguous(LAYOUT, device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true)),
                true);
    }

    private static void publish(SeleneCache cache, SimulatedDevice device, RecordSpec spec) {
        DevicePlacement snapshot = placement(device);
        KeyedContent.fillRecord(device, LAYOUT, snapshot, spec.key(), spec.hasRow());
        assertInstanceOf(PublishResult.Stored.class, cache.publish(spec, snapshot).toCompletableFuture().join());
    }

    private static IllegalArgumentException refused(CompletionStage<?> stage) {
        CompletionException e = assertThrows(CompletionException.class, () -> stage.toCompletableFuture().join());
        return assertInstanceOf(IllegalArgumentException.class, e.getCause());
    }

    @Test
    void badArguments_failTheirOwnCall_andTheNodeGoesOn() {
        try (SimulatedDevice device = SimulatedDevice.create(); SeleneCache cache = SeleneCache.start(config(), device)) {
            RecordSpec a = new RecordSpec(new RecordKey(NS, 1), null, true);
            RecordSpec b = new RecordSpec(new RecordKey(NS, 2), null, true);
            publish(cache, device, a);
            publish(cache, device, b);

            // A page from 1 with a limit near 2^31: the catalog's arithmetic wrapped and asked for an array too large.
            RecordPage rest = cache.records(null, null, 1, Integer.MAX_VALUE).toCompletableFuture().join();
            assertEquals(2, rest.total());
            assertEquals(1, rest.records().size());
            assertTrue(refused(cache.records(null, null, -1, 10)).getMessage().contains("offset -1"));

            assertTrue(refused(cache.lookup("Llama 3", new long[] {1})).getMessage()
                    .startsWith("namespace 'Llama 3' is invalid"));
            refused(cache.lookup(null, new long[] {1}));
            refused(cache.lookup(NS, null));
            List<DevicePlacement> targets = List.of(placement(device));
            refused(cache.restore(NS, new long[] {1}, targets, null));
            refused(cache.restore(NS, new long[] {1}, targets, Duration.ofSeconds(-1)));
            refused(cache.restore(NS, new long[] {1}, null, Duration.ofSeconds(1)));
            assertThrows(NullPointerException.class, () -> cache.reportAbandoned(null, RetryReason.INFLIGHT));
            assertThrows(NullPointerException.class, () -> cache.reportAbandoned(a.key(), null));

            RestoreResult restored = cache.restore(NS, new long[] {1}, targets, ChronoUnit.FOREVER.getDuration())
                    .toCompletableFuture().join();
            assertEquals(1, restored.fromMemory(), "the node still serves: " + restored);
            assertEquals(1, cache.lookup(NS, new long[] {2}).toCompletableFuture().join().depth());
        }
    }

    @Test
    void aRecomputeOfCenturies_isNeverAReasonToFail_whenTheMatchIsOnDisk() throws Exception {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "api-bad-input")), "disk");
        CacheConfig disk = config().withDisk(dir.toString(), 64L * LAYOUT.slotsPerRecord(true) * LAYOUT.slotBytes());
        RecordSpec a = new RecordSpec(new RecordKey(NS, 1), null, true);
        try (SimulatedDevice device = SimulatedDevice.create()) {
            try (SeleneCache cache = SeleneCache.start(disk, device)) {
                publish(cache, device, a);
                assertEquals(1, cache.drain(Duration.ofSeconds(20)).toCompletableFuture().join().written());
            }
            try (SeleneCache restarted = SeleneCache.start(disk, device)) {
                RestoreResult r = restarted.restore(NS, new long[] {1}, List.of(placement(device)),
                        ChronoUnit.FOREVER.getDuration()).toCompletableFuture().join();
                assertEquals(1, r.fromDisk(), "restored from disk, not failed on the duration's nanoseconds: " + r);
            }
        }
    }
}
