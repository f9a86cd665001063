package dev.selene.transport.disk;

import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The contract through the fault-injecting double with no fault armed, then each fault of §10 in turn. */
class FaultInjectingRecordIoTest extends RecordIoContract {

    private static ExecutorService transfers;
    private FaultInjectingRecordIo io;

    @BeforeAll
    static void startTransfers() {
        transfers = Executors.newFixedThreadPool(4, Thread.ofPlatform().name("faulty-transfer-", 0).daemon().factory());
    }

    @AfterAll
    static void stopTransfers() {
        transfers.shutdownNow();
    }

    @BeforeEach
    void newIo() {
        io = new FaultInjectingRecordIo(transfers, 4);
    }

    @Override
    protected RecordIo io() {
        return io;
    }

    @Test
    void eioDuringABodyWrite_failsWithTheErrno_andLeavesNothingBehind() throws IOException {
        io.failWrite(NativeIo.EIO, 2);
        NativeIoException e = assertThrows(NativeIoException.class, () -> writeSmall(CHILD_SPEC, 1));
        assertEquals(NativeIo.EIO, e.errno());
        assertTrue(e.getMessage().contains("EIO (input/output error"), e.getMessage());
        assertEquals(List.of(), fileNames());
    }

    @Test
    void enospcDuringTheFooterWrite_failsWithNoSpace_andLeavesNothingBehind() throws IOException {
        int bodyRuns = countWriteCalls() - 1;
        io.failWrite(NativeIo.ENOSPC, bodyRuns);
        NativeIoException e = assertThrows(NativeIoException.class, () -> writeSmall(CHILD_SPEC, 1));
        assertEquals("ENOSPC", e.errnoName());
        assertTrue(e.getMessage().contains("no space left on device"), e.getMessage());
        assertEquals(List.of(), fileNames());
    }

    @Test
    void preallocationFailure_removesTemporary() throws IOException {
        io.failPreallocation(NativeIo.ENOSPC);
        NativeIoException e = assertThrows(NativeIoException.class, () -> writeSmall(CHILD_SPEC, 1));
        assertEquals(NativeIo.ENOSPC, e.errno());
        assertTrue(e.getMessage().startsWith("fallocate"), e.getMessage());
        assertEquals(List.of(), fileNames());
        assertEquals(0, io.writeCalls(), "nothing is written after a failed preallocation");
    }

    @Test
    void theTemporary_isAllocatedToItsFinalLength_beforeItsFirstWrite_observed() throws IOException {
        assumeTrue(fallocateWorksIn(dir), "the file system of " + dir + " has no fallocate (the writer falls back)");
        io.observeFirstWrites();
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 4);
        FaultInjectingRecordIo.FirstWrite first = io.firstWrite(RecordFileNames.temporaryFile(written.file()));
        assertNotNull(first, "the temporary's first write was observed");
        assertEquals(written.bytes(), first.length(), "the temporary has its final length before anything is written");
        assertTrue(first.allocatedBytes() >= written.bytes(), "the file system allocated every byte before the first "
                + "write (fallocate, not a sparse length): " + first);
    }

    private static boolean fallocateWorksIn(Path dir) throws IOException {
        Path probe = dir.resolve("fallocate-probe");
        int fd = NativeIo.openDirectForWrite(probe);
        try {
            NativeIo.fallocate(fd, 4096, probe);
            return true;
        } catch (NativeIoException e) {
            if (e.errno() == NativeIo.EOPNOTSUPP) {
                return false;
            }
            throw e;
        } finally {
            NativeIo.close(fd, probe);
            Files.delete(probe);
        }
    }

    @Test
    void preallocationUnsupported_fallsBackToTheFinalLength_andStillCommits() throws IOException {
        io.failPreallocation(NativeIo.EOPNOTSUPP);
        io.observeFirstWrites();
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 4);
        FaultInjectingRecordIo.FirstWrite first = io.firstWrite(RecordFileNames.temporaryFile(written.file()));
        assertEquals(written.bytes(), first.length(), "without fallocate the temporary still has its final length "
                + "(sparse) before anything is written");
        try (RecordMemory target = RecordMemory.allocate(Layout.small(), true)) {
            io.read(written.file(), Layout.small(), target);
            target.assertHolds(4);
        }
        assertEquals(written.bytes(), Files.size(written.file()));
    }

    @Test
    void fsyncFailure_removesTemporary_andNothingBecomesVisible() throws IOException {
        io.failSync(NativeIo.EIO);
        assertEquals(NativeIo.EIO, assertThrows(NativeIoException.class, () -> writeSmall(CHILD_SPEC, 1)).errno());
        assertEquals(List.of(), fileNames());
    }

    @Test
    void directoryFsyncFailureAfterRename_removesTheRecordAgain() throws IOException {
        io.failDirectorySync(NativeIo.EIO);
        NativeIoException e = assertThrows(NativeIoException.class, () -> writeSmall(CHILD_SPEC, 1));
        assertTrue(e.getMessage().startsWith("fsync of directory"), e.getMessage());
        assertEquals(List.of(), fileNames());
    }

    @Test
    void failedWrite_retriedOnce_commits() throws IOException {
        io.failWrite(NativeIo.EIO, 0);
        assertThrows(NativeIoException.class, () -> writeSmall(CHILD_SPEC, 1));
        RecordIo.WriteResult retried = writeSmall(CHILD_SPEC, 1);
        assertEquals(List.of(retried.file().getFileName()), fileNames());
    }

    @Test
    void stalledWrite_doesNotHoldUpOtherRecords() throws Exception {
        FaultInjectingRecordIo.Stall stall = io.stallNextWrite(Duration.ofSeconds(30));
        CompletableFuture<RecordIo.WriteResult> stalled = CompletableFuture.supplyAsync(() -> {
            try {
                return writeSmall(ROOT_SPEC, 1);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        assertTrue(stall.awaitStarted(Duration.ofSeconds(10)), "the write reached the stall");

        RecordIo.WriteResult other = writeSmall(CHILD_SPEC, 2);
        assertTrue(Files.exists(other.file()));
        assertFalse(stalled.isDone());
        assertFalse(Files.exists(io.fileOf(dir, ROOT_SPEC.key())), "a stalled record is not visible");

        stall.release();
        RecordIo.WriteResult late = stalled.get(10, TimeUnit.SECONDS);
        try (RecordMemory target = RecordMemory.allocate(Layout.small(), false)) {
            io.read(late.file(), Layout.small(), target);
            target.assertHolds(1);
        }
    }

    @Test
    void secondWriteOfTheSameRecord_whileTheFirstIsInFlight_isRefused() throws Exception {
        FaultInjectingRecordIo.Stall stall = io.stallNextWrite(Duration.ofSeconds(30));
        CompletableFuture<RecordIo.WriteResult> first = CompletableFuture.supplyAsync(() -> {
            try {
                return writeSmall(CHILD_SPEC, 1);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        assertTrue(stall.awaitStarted(Duration.ofSeconds(10)));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> writeSmall(CHILD_SPEC, 2));
        assertTrue(e.getMessage().contains("already in progress"), e.getMessage());
        stall.release();
        first.get(10, TimeUnit.SECONDS);
    }

    @Test
    void crashBetweenWriteAndRename_leavesOnlyATemporary_thatRecoveryDeletes() throws IOException {
        io.crashBeforeRename();
        assertThrows(FaultInjectingRecordIo.SimulatedCrash.class, () -> writeSmall(CHILD_SPEC, 1));
        Path record = io.fileOf(dir, CHILD_SPEC.key());
        assertFalse(Files.exists(record), "nothing is visible under the record's name");
        assertEquals(List.of(RecordFileNames.temporaryFile(record).getFileName()), fileNames());

        try (DirectoryLock lock = DirectoryLock.acquire(dir)) {
            RecoveryScan.Result result = RecoveryScan.run(lock, io, Layout.small());
            assertEquals(1, result.temporariesDeleted());
            assertEquals(List.of(), result.records());
        }
        assertEquals(List.of(Path.of(DirectoryLock.LOCK_FILE_NAME)), fileNames());
    }

    /** Write calls one small record with a row takes: its body runs plus the footer. */
    private int countWriteCalls() throws IOException {
        int before = io.writeCalls();
        RecordSpec probe = new RecordSpec(ROOT.child(999), ROOT, true);
        io.delete(writeSmall(probe, 0).file());
        return io.writeCalls() - before;
    }
}
