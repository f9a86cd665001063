package dev.selene.actors.api;

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
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** A node that owns its actor system and its device leaves no thread of its own running once closed. */
class CloseLeavesNoThreadTest {

    private static Set<String> liveNonDaemonThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && !t.isDaemon())
                .map(Thread::getName).collect(Collectors.toSet());
    }

    @Test
    void closingANodeThatOwnsItsSystemAndDevice_leavesNoNewNonDaemonThread() throws Exception {
        Layout layout = Layout.small();
        Set<String> before = liveNonDaemonThreads();
        CacheConfig config = CacheConfig.memoryOnly(layout, 64L * layout.slotBytes()).withConcurrency(1)
                .withWindowSlots(layout.slotsPerRecord(true)).withHostBudgetBytes(128L * layout.slotBytes());
        try (SimulatedDevice device = SimulatedDevice.create()) {
            SeleneCache cache = SeleneCache.start(config, device);
            RecordSpec spec = new RecordSpec(new RecordKey("threads", 1), null, true);
            long base = device.allocateDevice(DevicePlacement.bytesNeeded(layout, true));
            DevicePlacement snapshot = DevicePlacement.contiguous(layout, base, true);
            KeyedContent.fillRecord(device, layout, snapshot, spec.key(), true);
            assertInstanceOf(PublishResult.Stored.class,
                    cache.publish(spec, snapshot).toCompletableFuture().get(10, TimeUnit.SECONDS));
            cache.restore("threads", new long[] {1}, List.of(snapshot), Duration.ofSeconds(1))
                    .toCompletableFuture().get(10, TimeUnit.SECONDS);
            cache.close();
            device.freeDevice(base);
        }
        Set<String> left = null;
        for (int i = 0; i < 100; i++) { // threads end shortly after their pools are shut down
            left = liveNonDaemonThreads();
            left.removeAll(before);
            if (left.isEmpty()) {
                break;
            }
            Thread.sleep(50);
        }
        assertEquals(Set.of(), left, "threads the node left running");
    }
}
