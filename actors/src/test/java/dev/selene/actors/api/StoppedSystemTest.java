package dev.selene.actors.api;

import dev.selene.actors.value.PublishResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a cache's callers see when its actor system stops under them, and when two threads close it at once. */
class StoppedSystemTest {

    private static final Layout LAYOUT = Layout.small();

    private static CacheConfig config() {
        return CacheConfig.memoryOnly(LAYOUT, 64L * LAYOUT.slotBytes()).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true)).withHostBudgetBytes(128L * LAYOUT.slotBytes());
    }

    /** Publishes {@code n} records at once, without waiting; their answers. */
    private static List<CompletableFuture<PublishResult>> publish(SeleneCache cache, SimulatedDevice device, int n,
                                                                  List<Long> allocations) {
        List<CompletableFuture<PublishResult>> answers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            RecordSpec spec = new RecordSpec(new RecordKey("stop", i + 1), null, true);
            long base = device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true));
            allocations.add(base);
            DevicePlacement snapshot = DevicePlacement.contiguous(LAYOUT, base, true);
            KeyedContent.fillRecord(device, LAYOUT, snapshot, spec.key(), true);
            answers.add(cache.publish(spec, snapshot, Duration.ofSeconds(5)).toCompletableFuture());
        }
        return answers;
    }

    @Test
    void answersStillAwaited_whenTheSystemStops_failAtOnce_ratherThanNever() throws Exception {
        List<Long> allocations = new ArrayList<>();
        // slow copies (256 KiB/s), so that most publications are still waiting when the system stops
        try (SimulatedDevice device = SimulatedDevice.create(1, 256L << 10)) {
            SeleneCache cache = SeleneCache.start(config(), device);
            List<CompletableFuture<PublishResult>> answers = publish(cache, device, 40, allocations);
            cache.system().terminate();
            cache.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
            CompletableFuture.allOf(answers.stream().map(a -> a.exceptionally(e -> null))
                    .toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            long failed = answers.stream().filter(CompletableFuture::isCompletedExceptionally).count();
            assertTrue(failed > 0, "some publications were still waiting when the system stopped: else this test "
                    + "shows nothing");
            cache.close();
            allocations.forEach(device::freeDevice);
        }
    }

    @Test
    void aCloseAtTheSameTimeAsAnother_returnsOnlyOnceTheNodeHasStopped() throws Exception {
        try (SimulatedDevice device = SimulatedDevice.create()) {
            SeleneCache cache = SeleneCache.start(config(), device);
            // a stop that takes half a second, so that the second close comes while the first waits for it
            CoordinatedShutdown.get(cache.system()).addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
                    "slow-stop", () -> CompletableFuture.supplyAsync(() -> Done.getInstance(),
                            CompletableFuture.delayedExecutor(500, TimeUnit.MILLISECONDS)));
            Thread first = Thread.ofPlatform().start(cache::close);
            Thread.sleep(100);
            cache.close();
            assertTrue(cache.system().whenTerminated().isCompleted(), "the second close returned before the node "
                    + "and its system had stopped");
            first.join(30_000);
        }
    }
}
