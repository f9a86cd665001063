package dev.selene.transport.gpu;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.host.HostMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The behaviour every {@link DeviceCopier} must show, run against each implementation by extending this class.
 */
public abstract class DeviceCopierContract {

    /** Four ranks, 8 KiB pages, three pages, a row of three pieces whose last holds 1001 bytes (not a word multiple). */
    protected static final Layout FOUR_RANKS = new Layout("contract-tp4", 4, 8192, 2 * 8192 + 1001, 3, 16);
    private static final long COPY_TIMEOUT_SECONDS = 30;
    private static final byte SENTINEL = (byte) 0xA5;

    protected DeviceCopier copier;
    private final List<HostMemory> hosts = new ArrayList<>();

    /** A fresh copier of the implementation under test. */
    protected abstract DeviceCopier createCopier();

    @BeforeEach
    void openCopier() {
        copier = createCopier();
        assertTrue(copier.isAvailable(), () -> copier.name() + " unavailable: " + copier.unavailabilityCause());
    }

    @AfterEach
    void closeCopier() {
        copier.close();
        hosts.forEach(HostMemory::close);
    }

    static Stream<Arguments> layoutsWithAndWithoutRow() {
        return Stream.of(
                Arguments.of(Layout.small(), false),
                Arguments.of(Layout.small(), true),
                Arguments.of(FOUR_RANKS, false),
                Arguments.of(FOUR_RANKS, true));
    }

    @ParameterizedTest(name = "{0} hasRow={1}")
    @MethodSource("layoutsWithAndWithoutRow")
    void copyToHost_thenToDevice_roundTripsEveryRankByteIdentically(Layout layout, boolean hasRow) throws Exception {
        int pieces = layout.slotsPerRecord(hasRow);
        HostMemory host = hostMemory(layout, 2 * pieces + 1);
        RecordKey key = new RecordKey("contract", 0x1234_5678_9ABCL);
        DevicePlacement source = allocateContiguous(layout, hasRow);
        KeyedContent.fillRecord(copier, layout, source, key, hasRow);
        SlotList slots = scatteredSlots(pieces);

        await(copier.copyToHost(CopyPlans.forRecord(layout, host, slots, source, hasRow)));

        for (int piece = 0; piece < pieces; piece++) {
            for (int rank = 0; rank < layout.ranks(); rank++) {
                MemorySegment share = host.share(slots.slot(piece), rank, layout.pieceBytes(piece));
                assertEquals(-1, KeyedContent.firstMismatch(share, KeyedContent.seed(key, rank, piece)),
                        "host bytes of piece " + piece + " rank " + rank);
            }
        }
        DevicePlacement target = allocateReversed(layout, hasRow);
        assertFalse(KeyedContent.verifyRecord(copier, layout, target, key, hasRow), "target starts without content");

        await(copier.copyToDevice(CopyPlans.forRecord(layout, host, slots, target, hasRow)));

        assertTrue(KeyedContent.verifyRecord(copier, layout, target, key, hasRow));
    }

    @Test
    void manyPlansInFlight_allLandIntactInTheirOwnSlots() throws Exception {
        Layout layout = Layout.small();
        int records = 64;
        int pieces = layout.slotsPerRecord(true);
        HostMemory host = hostMemory(layout, records * pieces);
        List<RecordKey> keys = new ArrayList<>();
        List<SlotList> slotLists = new ArrayList<>();
        List<DevicePlacement> sources = new ArrayList<>();
        List<CompletableFuture<Void>> toHost = new ArrayList<>();
        for (int r = 0; r < records; r++) {
            RecordKey key = new RecordKey("many", 1000 + r);
            DevicePlacement source = allocateContiguous(layout, true);
            KeyedContent.fillRecord(copier, layout, source, key, true);
            int[] slots = new int[pieces];
            for (int p = 0; p < pieces; p++) {
                slots[p] = p * records + r;
            }
            keys.add(key);
            slotLists.add(SlotList.of(slots));
            sources.add(source);
        }
        for (int r = 0; r < records; r++) {
            toHost.add(copier.copyToHost(CopyPlans.forRecord(layout, host, slotLists.get(r), sources.get(r), true)));
        }
        awaitAll(toHost);
        for (int r = 0; r < records; r++) {
            assertTrue(KeyedContent.verifyHostRecord(layout, host, slotLists.get(r), keys.get(r), true),
                    "host copy of record " + r);
        }

        List<DevicePlacement> targets = new ArrayList<>();
        List<CompletableFuture<Void>> toDevice = new ArrayList<>();
        for (int r = 0; r < records; r++) {
            DevicePlacement target = allocateContiguous(layout, true);
            targets.add(target);
            toDevice.add(copier.copyToDevice(CopyPlans.forRecord(layout, host, slotLists.get(r), target, true)));
        }
        awaitAll(toDevice);
        for (int r = 0; r < records; r++) {
            assertTrue(KeyedContent.verifyRecord(copier, layout, targets.get(r), keys.get(r), true),
                    "restored record " + r);
        }
    }

    @Test
    void planOutsideDeviceAllocation_failsItsFutureWithAMessage_andCopiesNothing() throws Exception {
        Layout layout = Layout.small();
        HostMemory host = hostMemory(layout, 4);
        long device = copier.allocateDevice(layout.pageBytes());
        long[] deviceAddresses = {device, device + layout.pageBytes()};
        CopyPlan plan = new CopyPlan(deviceAddresses, new long[] {host.address(0, 0), host.address(1, 0)},
                new int[] {layout.pageBytes(), layout.pageBytes()});
        fillHost(host, SENTINEL);

        String message = failureMessage(copier.copyToHost(plan));

        assertTrue(message.contains("outside") && message.contains("device"), message);
        assertTrue(hostIsAll(host, SENTINEL), "a rejected plan copies nothing, not even its valid pieces");
        assertCopierStillWorks(layout, host);
    }

    @Test
    void planOutsideHostMapping_failsItsFutureWithAMessage_andCopierKeepsWorking() throws Exception {
        Layout layout = Layout.small();
        HostMemory host = hostMemory(layout, 4);
        long device = copier.allocateDevice(layout.pageBytes());
        long pastTheEnd = host.address(3, 1) + layout.pageBytes();
        CopyPlan plan = new CopyPlan(new long[] {device}, new long[] {pastTheEnd - 8}, new int[] {16});

        String toHostMessage = failureMessage(copier.copyToHost(plan));
        String toDeviceMessage = failureMessage(copier.copyToDevice(plan));

        assertTrue(toHostMessage.contains("outside") && toHostMessage.contains("host"), toHostMessage);
        assertTrue(toDeviceMessage.contains("outside") && toDeviceMessage.contains("host"), toDeviceMessage);
        assertCopierStillWorks(layout, host);
    }

    @Test
    void planIntoUnregisteredHostMemory_failsItsFuture() throws Exception {
        Layout layout = Layout.small();
        HostMemory registered = hostMemory(layout, 2);
        HostMemory unregistered = HostMemory.allocate(layout, 2);
        hosts.add(unregistered);
        long device = copier.allocateDevice(layout.pageBytes());
        CopyPlan plan = new CopyPlan(new long[] {device}, new long[] {unregistered.address(0, 0)},
                new int[] {layout.pageBytes()});

        String message = failureMessage(copier.copyToHost(plan));

        assertTrue(message.contains("host"), message);
        assertCopierStillWorks(layout, registered);
    }

    @Test
    void planIntoFreedDeviceMemory_failsItsFuture() throws Exception {
        Layout layout = Layout.small();
        HostMemory host = hostMemory(layout, 2);
        long device = copier.allocateDevice(layout.pageBytes());
        copier.freeDevice(device);
        CopyPlan plan = new CopyPlan(new long[] {device}, new long[] {host.address(0, 0)},
                new int[] {layout.pageBytes()});

        String message = failureMessage(copier.copyToDevice(plan));

        assertTrue(message.contains("device"), message);
        assertCopierStillWorks(layout, host);
    }

    @Test
    void copyToHost_intoARecordsSlots_leavesNeighbouringSlotsAndUnusedTailsUntouched() throws Exception {
        Layout layout = Layout.small();
        int pieces = layout.slotsPerRecord(true);
        HostMemory host = hostMemory(layout, pieces + 4);
        fillHost(host, SENTINEL);
        RecordKey key = new RecordKey("neighbours", 7);
        DevicePlacement source = allocateContiguous(layout, true);
        KeyedContent.fillRecord(copier, layout, source, key, true);
        int[] slotArray = new int[pieces];
        for (int p = 0; p < pieces; p++) {
            slotArray[p] = p + 2;
        }
        SlotList slots = SlotList.of(slotArray);

        await(copier.copyToHost(CopyPlans.forRecord(layout, host, slots, source, true)));

        assertTrue(KeyedContent.verifyHostRecord(layout, host, slots, key, true));
        for (int slot = 0; slot < host.slotCount(); slot++) {
            int piece = slot - 2;
            int used = piece >= 0 && piece < pieces ? layout.pieceBytes(piece) : 0;
            for (int rank = 0; rank < layout.ranks(); rank++) {
                MemorySegment unused = host.share(slot, rank, layout.pageBytes()).asSlice(used);
                assertTrue(isAll(unused, SENTINEL), "slot " + slot + " rank " + rank + " beyond byte " + used);
            }
        }
    }

    @Test
    void copyToDevice_intoAPlacement_leavesNeighbouringDeviceBytesUntouched() throws Exception {
        Layout layout = Layout.small();
        int pieces = layout.slotsPerRecord(true);
        HostMemory host = hostMemory(layout, 2 * pieces);
        long placementBytes = DevicePlacement.bytesNeeded(layout, true);
        long guardBytes = layout.pageBytes();
        long region = copier.allocateDevice(placementBytes + 2 * guardBytes);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sentinel = arena.allocate(placementBytes + 2 * guardBytes);
            sentinel.fill(SENTINEL);
            copier.writeDevice(region, sentinel);
            RecordKey key = new RecordKey("neighbours", 8);
            DevicePlacement source = allocateContiguous(layout, true);
            KeyedContent.fillRecord(copier, layout, source, key, true);
            SlotList slots = scatteredSlots(pieces);
            await(copier.copyToHost(CopyPlans.forRecord(layout, host, slots, source, true)));
            DevicePlacement target = DevicePlacement.contiguous(layout, region + guardBytes, true);

            await(copier.copyToDevice(CopyPlans.forRecord(layout, host, slots, target, true)));

            assertTrue(KeyedContent.verifyRecord(copier, layout, target, key, true));
            MemorySegment readBack = arena.allocate(placementBytes + 2 * guardBytes);
            copier.readDevice(region, readBack);
            assertTrue(isAll(readBack.asSlice(0, guardBytes), SENTINEL), "guard before the placement");
            assertTrue(isAll(readBack.asSlice(guardBytes + placementBytes), SENTINEL), "guard after the placement");
            for (int piece = 0; piece < pieces; piece++) {
                for (int rank = 0; rank < layout.ranks(); rank++) {
                    long offset = target.address(layout, piece, rank) - region;
                    MemorySegment unused = readBack.asSlice(offset + layout.pieceBytes(piece),
                            layout.pageBytes() - layout.pieceBytes(piece));
                    assertTrue(isAll(unused, SENTINEL), "unused tail of piece " + piece + " rank " + rank);
                }
            }
        }
    }

    @Test
    void allocateDevice_returnsPageAlignedAddresses() {
        for (long bytes : new long[] {1, 4095, 4096, 100_000}) {
            long address = copier.allocateDevice(bytes);
            assertEquals(0, address % Layout.ALIGNMENT_BYTES, "allocation of " + bytes + " bytes");
        }
    }

    @Test
    void writeDevice_outsideAnAllocation_throwsWithAMessage() {
        long device = copier.allocateDevice(4096);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(8192);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> copier.writeDevice(device, buffer));
            assertTrue(e.getMessage().contains("outside"), e.getMessage());
        }
    }

    @Test
    void freeDevice_ofAnUnknownAddress_throws() {
        long device = copier.allocateDevice(4096);
        assertThrows(IllegalArgumentException.class, () -> copier.freeDevice(device + 4096 * 1024L));
    }

    /** A host mapping of {@code slots} slots registered with the copier and closed after the test. */
    protected HostMemory hostMemory(Layout layout, int slots) {
        HostMemory host = HostMemory.allocate(layout, slots);
        hosts.add(host);
        copier.register(host);
        return host;
    }

    private DevicePlacement allocateContiguous(Layout layout, boolean hasRow) {
        return DevicePlacement.contiguous(layout, copier.allocateDevice(DevicePlacement.bytesNeeded(layout, hasRow)),
                hasRow);
    }

    /** A placement whose shares run backwards through their allocation, unlike any contiguous one. */
    private DevicePlacement allocateReversed(Layout layout, boolean hasRow) {
        DevicePlacement packed = allocateContiguous(layout, hasRow);
        long[] reversed = new long[packed.shares()];
        for (int i = 0; i < reversed.length; i++) {
            reversed[i] = packed.addresses()[reversed.length - 1 - i];
        }
        return new DevicePlacement(reversed);
    }

    /** Slots 2p+1 in reverse piece order: not contiguous, not ascending. */
    private static SlotList scatteredSlots(int pieces) {
        int[] slots = new int[pieces];
        for (int p = 0; p < pieces; p++) {
            slots[p] = 2 * (pieces - 1 - p) + 1;
        }
        return SlotList.of(slots);
    }

    private void assertCopierStillWorks(Layout layout, HostMemory host) throws Exception {
        RecordKey key = new RecordKey("after-failure", 99);
        long device = copier.allocateDevice(layout.pageBytes());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(layout.pageBytes());
            KeyedContent.fill(page, KeyedContent.seed(key, 0, 0));
            copier.writeDevice(device, page);
        }
        CopyPlan plan = new CopyPlan(new long[] {device}, new long[] {host.address(0, 0)},
                new int[] {layout.pageBytes()});
        await(copier.copyToHost(plan));
        assertEquals(-1, KeyedContent.firstMismatch(host.share(0, 0, layout.pageBytes()),
                KeyedContent.seed(key, 0, 0)));
    }

    private static void await(CompletableFuture<Void> future) throws Exception {
        future.get(COPY_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    private static void awaitAll(List<CompletableFuture<Void>> futures) throws Exception {
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(COPY_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    private static String failureMessage(CompletableFuture<Void> future) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> future.get(COPY_TIMEOUT_SECONDS, TimeUnit.SECONDS));
        assertNotNull(e.getCause().getMessage(), "failure has a message");
        return e.getCause().getMessage();
    }

    private static void fillHost(HostMemory host, byte value) {
        host.segment().fill(value);
    }

    private static boolean hostIsAll(HostMemory host, byte value) {
        return isAll(host.segment(), value);
    }

    private static boolean isAll(MemorySegment segment, byte value) {
        for (long i = 0; i < segment.byteSize(); i++) {
            if (segment.get(ValueLayout.JAVA_BYTE, i) != value) {
                return false;
            }
        }
        return true;
    }
}
