package dev.selene.transport.gpu;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.host.HostMemory;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every {@link CopyMode} on a real GPU: the whole contract for the non-default modes, byte-identical round trips of
 * production-shaped records (DeepSeek TP4, Qwen TP1) in each mode, and a bad plan failing its future while the copier
 * keeps working. Skipped with the probe's reason where CUDA is absent.
 */
@Tag("gpu")
@ExtendWith(JCudaDeviceCopierTest.RequiresCuda.class)
class JCudaCopyModeTest {

    @Nested
    class PerPieceContract extends DeviceCopierContract {
        @Override
        protected DeviceCopier createCopier() {
            return JCudaDeviceCopier.create(CopyMode.PER_PIECE, 0);
        }
    }

    @Nested
    class KernelStagedContract extends DeviceCopierContract {
        @Override
        protected DeviceCopier createCopier() {
            return JCudaDeviceCopier.create(CopyMode.KERNEL_STAGED, 0);
        }
    }

    static Stream<Arguments> modesAndLayouts() {
        List<Arguments> out = new ArrayList<>();
        for (CopyMode mode : CopyMode.values()) {
            for (Layout layout : List.of(Layout.deepseekTp4(), Layout.qwenTp1())) {
                for (boolean contiguous : new boolean[] {true, false}) {
                    out.add(Arguments.of(mode, layout, contiguous));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} contiguousSlots={2}")
    @MethodSource("modesAndLayouts")
    void productionRecords_roundTripByteIdentically(CopyMode mode, Layout layout, boolean contiguousSlots)
            throws Exception {
        int records = 16;
        int pieces = layout.slotsPerRecord(true);
        try (JCudaDeviceCopier copier = JCudaDeviceCopier.create(mode, 0);
             HostMemory host = HostMemory.allocate(layout, records * pieces)) {
            copier.register(host);
            List<SlotList> slots = new ArrayList<>();
            List<CompletableFuture<Void>> toHost = new ArrayList<>();
            for (int r = 0; r < records; r++) {
                int[] s = new int[pieces];
                for (int p = 0; p < pieces; p++) {
                    s[p] = contiguousSlots ? r * pieces + p : (pieces - 1 - p) * records + r;
                }
                slots.add(SlotList.of(s));
                DevicePlacement source = DevicePlacement.contiguous(layout,
                        copier.allocateDevice(DevicePlacement.bytesNeeded(layout, true)), true);
                KeyedContent.fillRecord(copier, layout, source, new RecordKey(mode.label(), r), true);
                toHost.add(copier.copyToHost(CopyPlans.forRecord(layout, host, slots.get(r), source, true)));
            }
            CompletableFuture.allOf(toHost.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            List<DevicePlacement> targets = new ArrayList<>();
            List<CompletableFuture<Void>> toDevice = new ArrayList<>();
            for (int r = 0; r < records; r++) {
                assertTrue(KeyedContent.verifyHostRecord(layout, host, slots.get(r), new RecordKey(mode.label(), r),
                        true), "host copy of record " + r);
                DevicePlacement target = DevicePlacement.contiguous(layout,
                        copier.allocateDevice(DevicePlacement.bytesNeeded(layout, true)), true);
                targets.add(target);
                toDevice.add(copier.copyToDevice(CopyPlans.forRecord(layout, host, slots.get(r), target, true)));
            }
            CompletableFuture.allOf(toDevice.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            for (int r = 0; r < records; r++) {
                assertTrue(KeyedContent.verifyRecord(copier, layout, targets.get(r), new RecordKey(mode.label(), r),
                        true), "restored record " + r);
            }
            assertEquals(records * layout.recordBytes(true), copier.bytesCopiedToHost());
            assertEquals(records * layout.recordBytes(true), copier.bytesCopiedToDevice());
        }
    }

    static Stream<CopyMode> modes() {
        return Stream.of(CopyMode.values());
    }

    @ParameterizedTest
    @MethodSource("modes")
    void aPlanOutsideDeviceAllocations_failsItsFuture_andTheCopierKeepsWorking(CopyMode mode) throws Exception {
        Layout layout = Layout.small();
        try (JCudaDeviceCopier copier = JCudaDeviceCopier.create(mode, 0);
             HostMemory host = HostMemory.allocate(layout, 2)) {
            copier.register(host);
            long device = copier.allocateDevice(layout.pageBytes());
            CopyPlan bad = new CopyPlan(new long[] {device + layout.pageBytes()}, new long[] {host.address(0, 0)},
                    new int[] {layout.pageBytes()});

            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> copier.copyToHost(bad).get(30, TimeUnit.SECONDS));

            assertTrue(e.getCause().getMessage().contains("outside every device allocation"),
                    e.getCause().getMessage());
            CopyPlan good = new CopyPlan(new long[] {device}, new long[] {host.address(1, 1)},
                    new int[] {layout.pageBytes()});
            copier.copyToDevice(good).get(30, TimeUnit.SECONDS);
            copier.copyToHost(good).get(30, TimeUnit.SECONDS);
        }
    }
}
