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
import dev.selene.actors.cache.HostCache;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a cache's callers see when its actor system stops under them, when two threads close it at once, and when a
 * cache living in the application's system is closed.
 */
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

    @Test
    void closingACacheInTheApplicationsSystem_failsItsAwaitedAnswersAtOnce_andRefusesLaterCalls() throws Exception {
        List<Long> allocations = new ArrayList<>();
        ActorSystem<Void> app = ActorSystem.create(Behaviors.empty(), "app-close",
                CacheSettings.standaloneSystemConfig());
        // slow copies (256 KiB/s), so that most publications are still waiting when the cache closes
        try (SimulatedDevice device = SimulatedDevice.create(1, 256L << 10)) {
            SeleneCache cache = SeleneCache.startIn(app, config(), device, "selene");
            List<CompletableFuture<PublishResult>> answers = publish(cache, device, 40, allocations);
            cache.close();
            // the asks' own timeout is 35 s here: an answer nobody will give must not wait for it
            CompletableFuture.allOf(answers.stream().map(a -> a.exceptionally(e -> null))
                    .toArray(CompletableFuture[]::new)).get(5, TimeUnit.SECONDS);
            assertTrue(answers.stream().anyMatch(CompletableFuture::isCompletedExceptionally),
                    "some publications were still waiting when the cache closed: else this test shows nothing");
            ExecutionException later = assertThrows(ExecutionException.class, () -> cache.lookup("stop",
                    new long[] {1}).toCompletableFuture().get(5, TimeUnit.SECONDS));
            assertInstanceOf(IllegalStateException.class, later.getCause());
            assertEquals("the cache is closed", later.getCause().getMessage());
            assertFalse(app.whenTerminated().isCompleted(), "closing the cache left the application's system "
                    + "running");
            allocations.forEach(device::freeDevice);
        } finally {
            app.terminate();
            app.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void closingACacheAfterTheApplicationsSystemStopped_succeeds_andLaterCallsFail() throws Exception {
        ActorSystem<Void> app = ActorSystem.create(Behaviors.empty(), "app-gone",
                CacheSettings.standaloneSystemConfig());
        try (SimulatedDevice device = SimulatedDevice.create()) {
            SeleneCache cache = SeleneCache.startIn(app, config(), device, "selene");
            app.terminate();
            app.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
            cache.close(); // was: a failed stop after 30 s ("cache node did not stop"), the node long gone
            ExecutionException later = assertThrows(ExecutionException.class,
                    () -> cache.status().toCompletableFuture().get(5, TimeUnit.SECONDS));
            assertInstanceOf(IllegalStateException.class, later.getCause());
        }
    }

    @Test
    void aNodeItsParentStops_failsTheFacadesAwaitedAnswersAtOnce_andItsLaterCalls() throws Exception {
        List<Long> allocations = new ArrayList<>();
        try (SimulatedDevice device = SimulatedDevice.create(1, 256L << 10)) {
            HostCache.Parts parts = HostCache.Parts.of(device);
            CompletableFuture<ActorRef<HostCache.Command>> spawned = new CompletableFuture<>();
            ActorSystem<String> app = ActorSystem.create(parent(config(), parts, spawned), "app-parent",
                    CacheSettings.standaloneSystemConfig());
            try {
                SeleneCache cache = SeleneCache.over(app, spawned.get(10, TimeUnit.SECONDS), config(), parts);
                List<CompletableFuture<PublishResult>> answers = publish(cache, device, 40, allocations);
                app.tell("stop the node");
                CompletableFuture.allOf(answers.stream().map(a -> a.exceptionally(e -> null))
                        .toArray(CompletableFuture[]::new)).get(5, TimeUnit.SECONDS);
                assertTrue(answers.stream().anyMatch(CompletableFuture::isCompletedExceptionally),
                        "some publications were still waiting when the node stopped: else this test shows nothing");
                ExecutionException later = assertThrows(ExecutionException.class,
                        () -> cache.status().toCompletableFuture().get(5, TimeUnit.SECONDS));
                assertInstanceOf(IllegalStateException.class, later.getCause());
                cache.close();
            } finally {
                app.terminate();
                app.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
                allocations.forEach(device::freeDevice);
            }
        }
    }

    /** An application's guardian with the node as its child, which it stops when told to. */
    private static Behavior<String> parent(CacheConfig config, HostCache.Parts parts,
                                           CompletableFuture<ActorRef<HostCache.Command>> spawned) {
        return Behaviors.setup(ctx -> {
            ActorRef<HostCache.Command> child = ctx.spawn(HostCache.create(config, parts), "selene");
            spawned.complete(child);
            return Behaviors.receiveMessage(m -> {
                ctx.stop(child);
                return Behaviors.same();
            });
        });
    }
}
