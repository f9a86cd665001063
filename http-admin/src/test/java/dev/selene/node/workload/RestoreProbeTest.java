package dev.selene.node.workload;

import dev.selene.actors.api.SeleneCache;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.CopyPlan;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.ForwardingDeviceCopier;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The probe's two ways of checking restored bytes, on a real memory-only node and the simulated device. */
class RestoreProbeTest {

    private static final PrintStream NOWHERE = new PrintStream(OutputStream.nullOutputStream());

    @Test
    void checkedBetweenWaves_everyRecordIsCheckedByteForByte_andNoCheckReadsTheDeviceWhileARestoreCopies()
            throws Exception {
        probedInWaves(12, 3, CopyCounting::new, (waves, counting) -> {
            assertEquals(12, waves.full(), "every conversation restored in full");
            assertEquals(12L * 4, waves.verifiedRecords(), "every restored record checked");
            assertEquals(0, waves.mismatchedRecords());
            assertTrue(counting.restoreCopies.get() >= 12, "the restores copied through the counting device: "
                    + counting.restoreCopies);
            assertTrue(counting.checks.get() >= 12 * 4, "each record's shares read back: " + counting.checks);
            assertEquals(0, counting.checksDuringCopies.get(), "a check read the device while a restore copied to it");
        });
    }

    @Test
    void checkedBetweenWaves_aByteFlippedOnTheDeviceIsFound_faultInjectedByAForwardingCopier() throws Exception {
        probedInWaves(6, 5, FlippingOneRestore::new, (waves, flipping) -> {
            assertEquals(1, waves.mismatchedRecords(), "the one record whose restored bytes were flipped");
            assertEquals(6L * 4 - 1, waves.verifiedRecords());
        });
    }

    /**
     * Publishes {@code conversations} conversations of four records (seed {@code seed}) to a memory-only node whose
     * device is the simulated one seen through {@code wrap}, probes them with the checks between waves, and hands the
     * tally and the wrapper to {@code check}.
     */
    private static <T extends ForwardingDeviceCopier> void probedInWaves(int conversations, long seed,
                                                                         Function<DeviceCopier, T> wrap,
                                                                         BiConsumer<ProbeTally, T> check)
            throws Exception {
        Layout layout = Layout.small();
        WorkloadSettings settings = new WorkloadSettings(layout, conversations, 4, 4 * layout.tokensPerRecord(), 2,
                30_000, seed, false);
        long warm = settings.slotsNeeded() * layout.slotBytes() * 3;
        try (SimulatedDevice device = SimulatedDevice.create()) {
            T wrapped = wrap.apply(device);
            try (SeleneCache cache = SeleneCache.start(CacheConfig.memoryOnly(layout, warm).withConcurrency(4),
                    wrapped)) {
                Conversations generated = Conversations.generate(settings);
                generated.prefill(device, NOWHERE);
                PublishTally published = PublishPhase.run(cache, generated, NOWHERE, PublishPhase.Watch.NONE);
                assertEquals(conversations * 4L, published.stored(), "a warm tier three times the run keeps all");

                check.accept(RestoreProbe.run(cache, wrapped, generated, NOWHERE, "probe", true), wrapped);
                generated.freeSnapshots(device);
            }
        }
    }

    /** Counts the device reads of the checks, and those made while a copy to the device was in flight (held 5 ms). */
    private static final class CopyCounting extends ForwardingDeviceCopier {
        final AtomicInteger copying = new AtomicInteger();
        final AtomicInteger restoreCopies = new AtomicInteger();
        final AtomicInteger checks = new AtomicInteger();
        final AtomicInteger checksDuringCopies = new AtomicInteger();

        CopyCounting(DeviceCopier delegate) {
            super(delegate);
        }

        @Override
        public CompletableFuture<Void> copyToDevice(CopyPlan plan) {
            copying.incrementAndGet();
            restoreCopies.incrementAndGet();
            // Each restore copy is held a few milliseconds, so that a check running beside it could not miss it.
            return super.copyToDevice(plan)
                    .thenRunAsync(() -> { }, CompletableFuture.delayedExecutor(5, TimeUnit.MILLISECONDS))
                    .whenComplete((v, e) -> copying.decrementAndGet());
        }

        @Override
        public void readDevice(long address, MemorySegment dst) {
            checks.incrementAndGet();
            if (copying.get() > 0) {
                checksDuringCopies.incrementAndGet();
            }
            super.readDevice(address, dst);
        }
    }

    /** Fault injection: the first restore copy's first target byte is flipped once the copy has landed. */
    private static final class FlippingOneRestore extends ForwardingDeviceCopier {
        private final AtomicInteger copies = new AtomicInteger();

        FlippingOneRestore(DeviceCopier delegate) {
            super(delegate);
        }

        @Override
        public CompletableFuture<Void> copyToDevice(CopyPlan plan) {
            boolean flip = copies.getAndIncrement() == 0;
            return super.copyToDevice(plan).thenRun(() -> {
                if (flip) {
                    long address = plan.device()[0];
                    MemorySegment one = MemorySegment.ofArray(new byte[1]);
                    delegate().readDevice(address, one);
                    one.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0,
                            (byte) ~one.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
                    delegate().writeDevice(address, one);
                }
            });
        }
    }
}
