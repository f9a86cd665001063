package dev.selene.transport.gpu;

import com.sun.management.ThreadMXBean;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.host.HostMemory;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SimulatedDeviceTest extends DeviceCopierContract {

    @Override
    protected DeviceCopier createCopier() {
        return SimulatedDevice.create();
    }

    @Test
    void simulatedDevice_isAlwaysAvailable() {
        assertEquals("simulated", copier.name());
        assertTrue(copier.isAvailable());
        assertNull(copier.unavailabilityCause());
    }

    @Test
    void bandwidthCap_copiesStillLandAndByteCountersAddUpPerDirection() throws Exception {
        Layout layout = Layout.small();
        try (SimulatedDevice capped = SimulatedDevice.create(2, 64L << 20)) {
            int records = 8;
            int pieces = layout.slotsPerRecord(true);
            HostMemory host = hostMemory(layout, records * pieces);
            capped.register(host);
            List<CompletableFuture<Void>> toHost = new ArrayList<>();
            List<CopyPlan> plans = new ArrayList<>();
            long planned = 0;
            for (int r = 0; r < records; r++) {
                DevicePlacement source = DevicePlacement.contiguous(layout,
                        capped.allocateDevice(DevicePlacement.bytesNeeded(layout, true)), true);
                KeyedContent.fillRecord(capped, layout, source, new RecordKey("capped", r), true);
                CopyPlan plan = CopyPlans.forRecord(layout, host, slotsOf(r, pieces), source, true);
                plans.add(plan);
                planned += plan.totalBytes();
                toHost.add(capped.copyToHost(plan));
            }
            CompletableFuture.allOf(toHost.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            List<CompletableFuture<Void>> toDevice = new ArrayList<>();
            for (CopyPlan plan : plans) {
                toDevice.add(capped.copyToDevice(plan));
            }
            CompletableFuture.allOf(toDevice.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

            assertEquals(planned, capped.bytesCopiedToHost());
            assertEquals(planned, capped.bytesCopiedToDevice());
            assertEquals((long) records * layout.recordBytes(true), planned);
            for (int r = 0; r < records; r++) {
                assertTrue(KeyedContent.verifyHostRecord(layout, host, slotsOf(r, pieces), new RecordKey("capped", r),
                        true));
            }
        }
    }

    @Test
    void failedPlans_addNothingToTheByteCounters() throws Exception {
        SimulatedDevice device = (SimulatedDevice) copier;
        HostMemory host = hostMemory(Layout.small(), 1);
        CopyPlan bad = new CopyPlan(new long[] {12345}, new long[] {host.address(0, 0)}, new int[] {64});

        assertThrows(ExecutionException.class, () -> device.copyToHost(bad).get(30, TimeUnit.SECONDS));

        assertEquals(0, device.bytesCopiedToHost());
        assertEquals(0, device.bytesCopiedToDevice());
    }

    @Test
    void copies_runOnNamedDaemonCopyEngineThreads() throws Exception {
        Layout layout = Layout.small();
        HostMemory host = hostMemory(layout, 1);
        long address = copier.allocateDevice(layout.pageBytes());
        CopyPlan plan = new CopyPlan(new long[] {address}, new long[] {host.address(0, 0)},
                new int[] {layout.pageBytes()});

        copier.copyToHost(plan).get(30, TimeUnit.SECONDS);
        copier.copyToDevice(plan).get(30, TimeUnit.SECONDS);

        List<Thread> engines = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("sim-copy-")).toList();
        assertTrue(engines.stream().anyMatch(t -> t.getName().equals("sim-copy-d2h-0")), engines.toString());
        assertTrue(engines.stream().anyMatch(t -> t.getName().equals("sim-copy-h2d-0")), engines.toString());
        assertTrue(engines.stream().allMatch(Thread::isDaemon), engines.toString());
    }

    @Test
    void close_completesEveryPendingCopyAndFreesDeviceMemory() throws Exception {
        Layout layout = Layout.small();
        SimulatedDevice slow = SimulatedDevice.create(1, 1L << 20);
        HostMemory host = hostMemory(layout, 20);
        slow.register(host);
        long address = slow.allocateDevice(layout.slotBytes());
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int slot = 0; slot < 20; slot++) {
            CopyPlan plan = new CopyPlan(new long[] {address, address + layout.pageBytes()},
                    new long[] {host.address(slot, 0), host.address(slot, 1)},
                    new int[] {layout.pageBytes(), layout.pageBytes()});
            futures.add(slow.copyToHost(plan));
        }

        slow.close();

        assertTrue(futures.stream().allMatch(CompletableFuture::isDone), "every copy completed by close");
        ExecutionException failed = assertThrows(ExecutionException.class, () -> futures.getLast().get());
        assertTrue(failed.getCause().getMessage().contains("closed"), failed.getCause().getMessage());
        assertEquals(0, slow.allocatedBytes());
        CompletableFuture<Void> afterClose = slow.copyToHost(new CopyPlan(new long[0], new long[0], new int[0]));
        assertTrue(afterClose.isCompletedExceptionally());
        assertThrows(IllegalStateException.class, () -> slow.allocateDevice(4096));
    }

    @Test
    void create_rejectsInvalidSettingsWithTheAllowedValues() {
        IllegalArgumentException threads = assertThrows(IllegalArgumentException.class,
                () -> SimulatedDevice.create(0, 0));
        IllegalArgumentException bandwidth = assertThrows(IllegalArgumentException.class,
                () -> SimulatedDevice.create(1, -1));
        assertTrue(threads.getMessage().contains("allowed"), threads.getMessage());
        assertTrue(bandwidth.getMessage().contains("allowed"), bandwidth.getMessage());
    }

    private static SlotList slotsOf(int record, int pieces) {
        int[] slots = new int[pieces];
        for (int p = 0; p < pieces; p++) {
            slots[p] = record * pieces + p;
        }
        return SlotList.of(slots);
    }
}
