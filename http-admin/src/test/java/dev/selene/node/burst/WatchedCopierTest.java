package dev.selene.node.burst;

import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.host.HostMemory;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/** The burst's watched copier: it remembers the host mapping registered last and passes every call on. */
class WatchedCopierTest {

    private static final Layout LAYOUT = Layout.small();

    @Test
    void register_passesTheMappingToTheDevice_andRemembersTheLatest() {
        try (SimulatedDevice device = SimulatedDevice.create();
             HostMemory first = HostMemory.allocate(LAYOUT, 2);
             HostMemory second = HostMemory.allocate(LAYOUT, 2)) {
            WatchedCopier copier = new WatchedCopier(device);
            assertNull(copier.registered(), "nothing registered yet");
            copier.register(first);
            copier.register(second);
            assertSame(second, copier.registered());
            assertSame(device, copier.delegate());
            assertEquals(device.name(), copier.name());

            long address = copier.allocateDevice(LAYOUT.pageBytes());
            MemorySegment bytes = MemorySegment.ofArray(new byte[LAYOUT.pageBytes()]);
            bytes.fill((byte) 9);
            copier.writeDevice(address, bytes);
            MemorySegment back = second.share(1, 0, LAYOUT.pageBytes());
            copier.readDevice(address, back);
            assertEquals(-1, back.mismatch(bytes), "reads and writes reach the device");
            copier.freeDevice(address);
        }
    }
}
