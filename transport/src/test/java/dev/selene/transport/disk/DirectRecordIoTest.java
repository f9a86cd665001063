package dev.selene.transport.disk;

import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.host.HostMemory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The contract on the real disk: O_DIRECT files in a temporary directory. */
class DirectRecordIoTest extends RecordIoContract {

    private static ExecutorService transfers;

    @BeforeAll
    static void startTransfers() {
        transfers = Executors.newFixedThreadPool(4, Thread.ofPlatform().name("disk-transfer-", 0).daemon().factory());
    }

    @AfterAll
    static void stopTransfers() {
        transfers.shutdownNow();
    }

    @Override
    protected RecordIo io() {
        return DirectRecordIo.create(transfers, 4);
    }

    @Test
    void sequentialIo_writesAndReadsOnTheCallingThreadOnly() throws IOException {
        RecordIo io = DirectRecordIo.sequential();
        Layout layout = Layout.deepseekTp4();
        try (RecordMemory source = RecordMemory.allocate(layout, true).fill(8);
             RecordMemory target = RecordMemory.allocate(layout, true)) {
            io.read(io.write(CHILD_SPEC, layout, source, dir).file(), layout, target);
            target.assertHolds(8);
        }
    }

    @Test
    void aShutDownExecutor_slowsWritesDownButNeverFailsThem() throws IOException {
        ExecutorService stopped = Executors.newSingleThreadExecutor();
        stopped.shutdown();
        RecordIo io = DirectRecordIo.create(stopped, 4);
        Layout layout = Layout.qwenTp1();
        try (RecordMemory source = RecordMemory.allocate(layout, true).fill(9);
             RecordMemory target = RecordMemory.allocate(layout, true)) {
            io.read(io.write(CHILD_SPEC, layout, source, dir).file(), layout, target);
            target.assertHolds(9);
        }
    }

    @Test
    void write_fromHostMemorySlots_thenReadIntoOtherSlots_returnsBytesIdentical() throws IOException {
        Layout layout = Layout.deepseekTp4();
        int slots = layout.slotsPerRecord(true);
        try (HostMemory memory = HostMemory.allocate(layout, 2 * slots);
             RecordMemory pattern = RecordMemory.allocate(layout, true).fill(12)) {
            SlotList from = SlotList.of(IntStream.range(0, slots).map(i -> 2 * i).toArray());
            SlotList into = SlotList.of(IntStream.range(0, slots).map(i -> 2 * (slots - 1 - i) + 1).toArray());
            ShareMemory source = (piece, rank) -> memory.share(from.slot(piece), rank, layout.pageBytes());
            ShareMemory target = (piece, rank) -> memory.share(into.slot(piece), rank, layout.pageBytes());
            for (int piece = 0; piece < slots; piece++) {
                for (int rank = 0; rank < layout.ranks(); rank++) {
                    source.share(piece, rank).copyFrom(pattern.share(piece, rank));
                }
            }
            RecordIo io = io();
            io.read(io.write(CHILD_SPEC, layout, source, dir).file(), layout, target);
            for (int piece = 0; piece < slots; piece++) {
                for (int rank = 0; rank < layout.ranks(); rank++) {
                    int used = layout.pieceBytes(piece);
                    assertEquals(-1, MemorySegment.mismatch(source.share(piece, rank), 0, used,
                            target.share(piece, rank), 0, used), "piece " + piece + ", rank " + rank);
                }
            }
        }
    }

    @Test
    void create_withAnInvalidFanOut_isRejected() {
        assertThrows(IllegalArgumentException.class, () -> DirectRecordIo.create(transfers, 0));
    }
}
