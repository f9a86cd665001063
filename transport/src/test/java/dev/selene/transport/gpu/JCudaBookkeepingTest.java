package dev.selene.transport.gpu;

import dev.selene.engine.layout.Layout;
import dev.selene.transport.host.HostMemory;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The JCuda copier's allocation and registration books, which decide what a plan may touch. */
class JCudaBookkeepingTest {

    @Test
    void allocations_areAlignedUp_andRangesMustFitInsideOne() {
        DeviceAllocations allocations = new DeviceAllocations();
        DeviceAllocations.Allocation a = allocations.add(0x7000_0100L, 10_000);

        assertEquals(0x7000_1000L, a.start);
        assertEquals(a, allocations.pin("x", a.start, 10_000));
        assertEquals(a, allocations.pin("x", a.start + 9_999, 1));
        IllegalArgumentException past = assertThrows(IllegalArgumentException.class,
                () -> allocations.pin("piece 3:", a.start + 9_999, 2));
        assertTrue(past.getMessage().startsWith("piece 3: device range 0x"), past.getMessage());
        assertTrue(past.getMessage().contains("outside every device allocation"), past.getMessage());
        assertThrows(IllegalArgumentException.class, () -> allocations.pin("x", a.start - 1, 1));
        assertEquals(10_000, allocations.liveBytes());
    }

    @Test
    void pinAll_isAllOrNothing() {
        DeviceAllocations allocations = new DeviceAllocations();
        DeviceAllocations.Allocation a = allocations.add(0x1000_0000L, 8192);

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> allocations.pinAll(new long[] {a.start, a.start + 4096, 0x42}, new int[] {4096, 4096, 1}));

        assertTrue(e.getMessage().startsWith("copy plan piece 2:"), e.getMessage());
        assertEquals(0, a.pins(), "the pieces pinned before the bad one were unpinned");
    }

    @Test
    void removedAllocations_failNewPlans_andWaitForTheirPins() throws Exception {
        DeviceAllocations allocations = new DeviceAllocations();
        DeviceAllocations.Allocation a = allocations.add(0x2000_0000L, 4096);
        allocations.pin("x", a.start, 4096);

        DeviceAllocations.Allocation removed = allocations.remove(a.start);

        assertThrows(IllegalArgumentException.class, () -> allocations.pin("x", a.start, 1));
        assertThrows(IllegalArgumentException.class, () -> allocations.remove(a.start));
        assertFalse(removed.awaitUnpinned(TimeUnit.MILLISECONDS.toNanos(10)));
        Thread.ofPlatform().start(removed::unpin);
        assertTrue(removed.awaitUnpinned(TimeUnit.SECONDS.toNanos(10)));
    }

    @Test
    void registrations_translateHostAddressesToTheDeviceView_andRejectOthers() {
        HostRegistrations registrations = new HostRegistrations();
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> registrations.resolve("p:", 0x1000, 1));
        assertTrue(none.getMessage().contains("(none registered)"), none.getMessage());
        try (HostMemory host = HostMemory.allocate(Layout.small(), 4)) {
            long base = host.segment().address();
            registrations.add(host, 0xD000_0000_0000L);

            HostRegistrations.Registration r = registrations.resolve("p:", host.address(2, 1), 4096);

            assertEquals(0xD000_0000_0000L + (host.address(2, 1) - base), r.deviceView(host.address(2, 1)));
            IllegalArgumentException outside = assertThrows(IllegalArgumentException.class,
                    () -> registrations.resolve("p:", host.address(3, 1) + 8, 4096));
            assertTrue(outside.getMessage().contains("outside the registered host mapping"), outside.getMessage());
            assertTrue(registrations.contains(host));
        }
    }

    @Test
    void closedMappings_areReportedAndSwept() {
        HostRegistrations registrations = new HostRegistrations();
        HostMemory host = HostMemory.allocate(Layout.small(), 2);
        registrations.add(host, 1L << 40);
        long address = host.address(0, 0);
        host.close();

        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> registrations.resolve("p:", address, 16));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertEquals(1, registrations.removeClosed().size());
        assertFalse(registrations.contains(host));
    }
}
