package dev.selene.node.burst;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.host.HostMemory;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The burst's raw copy baseline on the simulated device: its untimed warm-up copies into scratch memory only; its two
 * halves copy every share of the burst's own snapshots, each record into its own slots, and count exactly the bytes
 * the node would publish; it lays the records out from slot 0 of the slots it is given (the node's), starting there
 * again when they outgrow them.
 */
class RawPublishCopyTest {

    private static final Layout LAYOUT = Layout.small();

    /** The burst's snapshots as the baseline takes them: each record's key, device placement and whether it has a row. */
    private record Snapshots(List<RecordKey> keys, List<DevicePlacement> placements, List<Boolean> hasRow) {

        /** {@code count} records keyed from {@code firstKey}, filled on {@code device}; every {@code rowEvery}-th
         * (counting from 1) has a row, none when 0. */
        static Snapshots filled(SimulatedDevice device, int count, long firstKey, int rowEvery) {
            Snapshots s = new Snapshots(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
            for (int r = 0; r < count; r++) {
                boolean row = rowEvery > 0 && r % rowEvery == rowEvery - 1;
                RecordKey key = new RecordKey("raw", firstKey + r);
                DevicePlacement p = DevicePlacement.contiguous(LAYOUT,
                        device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, row)), row);
                KeyedContent.fillRecord(device, LAYOUT, p, key, row);
                s.keys.add(key);
                s.placements.add(p);
                s.hasRow.add(row);
            }
            return s;
        }

        long bytes() {
            return hasRow.stream().mapToLong(LAYOUT::recordBytes).sum();
        }

        int slots() {
            return hasRow.stream().mapToInt(LAYOUT::slotsPerRecord).sum();
        }
    }

    @Test
    void into_theNodesSlots_laysTheRecordsOutFromSlotZero_andStartsAgainThereWhenTheyOutgrowThem() throws Exception {
        try (SimulatedDevice device = SimulatedDevice.create()) {
            Snapshots snaps = Snapshots.filled(device, 3, 2000, 0);
            int perRecord = LAYOUT.slotsPerRecord(false);
            // Room for two records and a slot more: the third record does not fit after the second.
            try (HostMemory nodeSlots = HostMemory.allocate(LAYOUT, 2 * perRecord + 1)) {
                RawPublishCopy raw = RawPublishCopy.into(nodeSlots, 1);
                raw.copy(device, snaps.placements(), snaps.hasRow(), 0, 2);
                SlotList second = SlotList.of(IntStream.range(perRecord, 2 * perRecord).toArray());
                assertTrue(KeyedContent.verifyHostRecord(LAYOUT, nodeSlots, second, snaps.keys().get(1), false),
                        "the second record follows the first");
                raw.copy(device, snaps.placements(), snaps.hasRow(), 2, 3);
                SlotList fromZero = SlotList.of(IntStream.range(0, perRecord).toArray());
                assertTrue(KeyedContent.verifyHostRecord(LAYOUT, nodeSlots, fromZero, snaps.keys().get(2), false),
                        "the third record starts again at slot 0");
            }
        }
    }

    @Test
    void warmUp_writesNoTargetSlot_thenTwoHalves_copyEveryShareOfEverySnapshot_intoItsOwnSlots_andCountTheBytes() throws Exception {
        try (SimulatedDevice device = SimulatedDevice.create()) {
            Snapshots snaps = Snapshots.filled(device, 7, 1000, 3);
            List<RecordKey> keys = snaps.keys();
            List<DevicePlacement> snapshots = snaps.placements();
            List<Boolean> hasRow = snaps.hasRow();
            try (HostMemory slots = HostMemory.allocate(LAYOUT, snaps.slots())) {
                RawPublishCopy raw = RawPublishCopy.into(slots, 2);
                long warmStart = System.nanoTime();
                raw.warmUp(device, snapshots, hasRow, 500, TimeUnit.MILLISECONDS.toNanos(50), 1 << 20);
                assertTrue(System.nanoTime() - warmStart >= TimeUnit.MILLISECONDS.toNanos(50), "it copies that long");
                assertEquals(0, raw.passes().size(), "the warm-up is not a pass");
                MemorySegment target = slots.segment();
                assertEquals(-1, target.mismatch(MemorySegment.ofArray(new byte[(int) target.byteSize()])),
                        "nor does it write a target slot: each is written once, by its pass");
                RawPublishCopy.Pass first = raw.copy(device, snapshots, hasRow, 0, 3);
                RawPublishCopy.Pass second = raw.copy(device, snapshots, hasRow, 3, 7);
                assertEquals(snaps.bytes(), first.bytes() + second.bytes(), "the halves move the burst's bytes");
                assertTrue(first.wallNanos() > 0 && second.wallNanos() > 0);
                assertEquals(2, raw.passes().size());
                assertTrue(raw.gbps() > 0);
                int slot = 0;
                for (int r = 0; r < keys.size(); r++) {
                    int n = LAYOUT.slotsPerRecord(hasRow.get(r));
                    SlotList own = SlotList.of(IntStream.range(slot, slot + n).toArray());
                    assertTrue(KeyedContent.verifyHostRecord(LAYOUT, slots, own, keys.get(r), hasRow.get(r)),
                            "record " + r + " copied byte for byte into its own slots");
                    slot += n;
                }
                assertTrue(raw.copyWhole(device, snapshots, hasRow) > 0);
                SlotList firstRecord = SlotList.of(IntStream.range(0, LAYOUT.slotsPerRecord(hasRow.get(0))).toArray());
                assertTrue(KeyedContent.verifyHostRecord(LAYOUT, slots, firstRecord, keys.get(0),
                        hasRow.get(0)), "one large copy per record lays the shares out as the share copies do");
                assertFalse(KeyedContent.verifyHostRecord(LAYOUT, slots, firstRecord, keys.get(1),
                        hasRow.get(1)), "the check tells records apart");
            }
        }
    }
}
