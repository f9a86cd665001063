package dev.selene.transport.host;

import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostMemoryTest {

    private static final Layout FOUR_RANKS = new Layout("test-tp4", 4, 8192, 8192, 2, 16);

    @Test
    void allocate_mapsSlotCountSlotsAlignedTo4096() {
        try (HostMemory host = HostMemory.allocate(FOUR_RANKS, 5)) {
            assertEquals(0, host.segment().address() % 4096);
            assertEquals(5 * FOUR_RANKS.slotBytes(), host.segment().byteSize());
            assertEquals(5, host.slotCount());
            assertEquals(FOUR_RANKS, host.layout());
        }
    }

    @Test
    void address_placesRankRAtRTimesPageBytesInEverySlot() {
        try (HostMemory host = HostMemory.allocate(FOUR_RANKS, 3)) {
            long base = host.segment().address();
            for (int slot = 0; slot < 3; slot++) {
                for (int rank = 0; rank < 4; rank++) {
                    long expected = base + slot * FOUR_RANKS.slotBytes() + rank * 8192L;
                    assertEquals(expected, host.address(slot, rank), "slot " + slot + " rank " + rank);
                    assertEquals(0, host.address(slot, rank) % 4096);
                }
            }
        }
    }

    @Test
    void share_isTheSliceAtTheRanksAddress() {
        try (HostMemory host = HostMemory.allocate(FOUR_RANKS, 2)) {
            MemorySegment share = host.share(1, 2, 100);
            share.set(ValueLayout.JAVA_BYTE, 0, (byte) 42);

            assertEquals(100, share.byteSize());
            assertEquals(host.address(1, 2), share.address());
            long offset = host.address(1, 2) - host.segment().address();
            assertEquals(42, host.segment().get(ValueLayout.JAVA_BYTE, offset));
        }
    }

    @Test
    void addressAndShare_outsideTheSlotsOrRanks_throwIndexOutOfBoundsNamingTheRange() {
        try (HostMemory host = HostMemory.allocate(FOUR_RANKS, 3)) {
            IndexOutOfBoundsException slot = assertThrows(IndexOutOfBoundsException.class, () -> host.address(3, 0));
            IndexOutOfBoundsException negative = assertThrows(IndexOutOfBoundsException.class,
                    () -> host.address(-1, 0));
            IndexOutOfBoundsException rank = assertThrows(IndexOutOfBoundsException.class, () -> host.address(0, 4));
            IndexOutOfBoundsException bytes = assertThrows(IndexOutOfBoundsException.class,
                    () -> host.share(0, 0, 8193));

            assertTrue(slot.getMessage().contains("slot 3") && slot.getMessage().contains("0..2"), slot.getMessage());
            assertTrue(negative.getMessage().contains("slot -1"), negative.getMessage());
            assertTrue(rank.getMessage().contains("rank 4") && rank.getMessage().contains("0..3"), rank.getMessage());
            assertTrue(bytes.getMessage().contains("8193"), bytes.getMessage());
        }
    }

    @Test
    void contains_acceptsExactlyTheRangesInsideTheMapping() {
        try (HostMemory host = HostMemory.allocate(FOUR_RANKS, 2)) {
            long base = host.segment().address();
            long size = host.segment().byteSize();

            assertTrue(host.contains(base, size));
            assertTrue(host.contains(base + size - 1, 1));
            assertTrue(host.contains(base + size, 0));
            assertFalse(host.contains(base + size - 1, 2));
            assertFalse(host.contains(base - 1, 1));
            assertFalse(host.contains(base, size + 1));
            assertFalse(host.contains(base, -1));
            assertFalse(host.contains(Long.MAX_VALUE, 1));
        }
    }

    @Test
    void allocate_rejectsFewerThanOneSlot() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HostMemory.allocate(FOUR_RANKS, 0));
        assertTrue(e.getMessage().contains("slotCount"), e.getMessage());
    }

    @Test
    void close_makesTheMappingInaccessibleAndIsIdempotent() {
        HostMemory host = HostMemory.allocate(FOUR_RANKS, 1);
        MemorySegment segment = host.segment();

        host.close();
        host.close();

        assertFalse(host.isOpen());
        assertThrows(IllegalStateException.class, () -> segment.get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void close_runsTheBeforeUnmapActionsInOrderWhileStillMapped_evenWhenOneThrows_andOnlyOnce() {
        HostMemory host = HostMemory.allocate(FOUR_RANKS, 1);
        List<String> seen = new ArrayList<>();
        host.beforeUnmap(() -> seen.add("first, mapped=" + host.isOpen()
                + ", readable=" + (host.segment().get(ValueLayout.JAVA_BYTE, 0) == 0)));
        host.beforeUnmap(() -> {
            throw new IllegalStateException("injected failure of the second action");
        });
        host.beforeUnmap(() -> seen.add("third, mapped=" + host.isOpen()));

        IllegalStateException e = assertThrows(IllegalStateException.class, host::close);
        host.close();

        assertEquals("injected failure of the second action", e.getMessage());
        assertEquals(List.of("first, mapped=true, readable=true", "third, mapped=true"), seen);
        assertFalse(host.isOpen(), "unmapped despite the failed action");
        assertThrows(IllegalStateException.class, () -> host.beforeUnmap(() -> { }));
    }

    /** Resident memory of this process, from /proc (Linux only). */
    private static long residentBytes() throws java.io.IOException {
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    @Test
    @org.junit.jupiter.api.condition.EnabledOnOs(org.junit.jupiter.api.condition.OS.LINUX)
    void aLargeMapping_isResidentBeforeAnyCopy_readsAsZeros_andIsUnmappedOnClose() throws Exception {
        Layout layout = Layout.deepseekTp4();
        int slots = (int) ((256L << 20) / layout.slotBytes()); // 256 MiB
        long before = residentBytes();
        HostMemory memory = HostMemory.allocate(layout, slots);
        try {
            long mapped = residentBytes() - before;
            // Faulted in up front: a transfer into the slots never waits for the kernel to supply a page.
            assertTrue(mapped > 200L << 20, "mapping 256 MiB of slots made only " + (mapped >> 20)
                    + " MiB resident: copies into the slots will stop on page faults");
            for (int slot = 0; slot < slots; slot += slots / 7) {
                MemorySegment share = memory.share(slot, layout.ranks() - 1, layout.pageBytes());
                assertEquals(0L, share.get(ValueLayout.JAVA_LONG, share.byteSize() - 8), "slot " + slot);
                share.set(ValueLayout.JAVA_LONG, 0, 42L);
                assertEquals(42L, share.get(ValueLayout.JAVA_LONG, 0));
            }
        } finally {
            memory.close();
        }
        assertThrows(IllegalStateException.class, () -> memory.share(0, 0, 8).get(ValueLayout.JAVA_LONG, 0));
    }
}
