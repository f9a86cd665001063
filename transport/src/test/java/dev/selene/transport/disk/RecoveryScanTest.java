package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordFormatException.Kind;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class RecoveryScanTest {

    private static final Layout LAYOUT = Layout.small();
    private static final RecordKey ROOT = new RecordKey("scan", 0x5CA7L);

    @TempDir(factory = BuildDirectoryTempDirs.class)
    Path dir;

    @BeforeAll
    static void requireNativeIo() {
        assumeTrue(NativeIo.isAvailable(), () -> "native I/O is unavailable: " + NativeIo.unavailabilityCause());
    }

    private final RecordIo io = DirectRecordIo.sequential();

    @Test
    void scan_returnsEveryValidRecord_withItsMtimeAsLastUse() throws IOException {
        RecordSpec root = new RecordSpec(ROOT, null, false);
        RecordSpec child = new RecordSpec(ROOT.child(1), ROOT, true);
        Path rootFile = write(root, 1);
        write(child, 2);
        Instant lastUse = Instant.parse("2026-11-30T12:00:00Z");
        Files.setLastModifiedTime(rootFile, FileTime.from(lastUse));

        RecoveryScan.Result result = scan(RecoveryScan.Depth.HEADERS);
        assertEquals(2, result.records().size());
        RecoveryScan.Recovered recoveredRoot = result.records().stream()
                .filter(r -> r.spec().equals(root)).findFirst().orElseThrow();
        assertEquals(lastUse, recoveredRoot.lastUse());
        assertEquals(RecordFileFormat.fileLength(LAYOUT, false), recoveredRoot.fileBytes());
        assertTrue(result.records().stream().anyMatch(r -> r.spec().equals(child)));
        assertEquals(0, result.rejected());
    }

    @Test
    void scan_deletesLeftoverTemporaries() throws IOException {
        Path record = write(new RecordSpec(ROOT, null, true), 1);
        Path temporary = RecordFileNames.temporaryFile(record.resolveSibling("scan@00000000000000aa.rec"));
        Files.write(temporary, new byte[8192]);
        RecoveryScan.Result result = scan(RecoveryScan.Depth.HEADERS);
        assertEquals(1, result.temporariesDeleted());
        assertFalse(Files.exists(temporary));
        assertEquals(1, result.records().size());
    }

    @Test
    void flippedBitInTheHeader_isQuarantinedAsCorrupt_neverReturned() throws IOException {
        Path file = write(new RecordSpec(ROOT, null, true), 1);
        FileDamage.flipBit(file, 50, 2);
        RecoveryScan.Result result = scan(RecoveryScan.Depth.HEADERS);
        assertEquals(List.of(), result.records());
        assertEquals(Map.of(Kind.CORRUPT, 1), result.quarantinedByKind());
        assertFalse(Files.exists(file));
        assertEquals(List.of(dir.toRealPath().resolve("quarantine").resolve(file.getFileName())),
                result.quarantined());
    }

    @Test
    void flippedBitInTheBody_isQuarantinedByAFullScan_andCaughtOnReadOtherwise() throws IOException {
        Path file = write(new RecordSpec(ROOT, null, true), 1);
        FileDamage.flipBit(file, RecordFileFormat.shareOffset(LAYOUT, 0, 1) + 4000, 7);
        assertEquals(1, scan(RecoveryScan.Depth.HEADERS).records().size(), "a header scan does not read bodies");

        RecoveryScan.Result full = scan(RecoveryScan.Depth.FULL);
        assertEquals(List.of(), full.records());
        assertEquals(Map.of(Kind.CORRUPT, 1), full.quarantinedByKind());
    }

    @Test
    void truncatedFile_isQuarantinedAsTruncated() throws IOException {
        Path file = write(new RecordSpec(ROOT, null, true), 1);
        FileDamage.truncate(file, 3 * 4096);
        RecoveryScan.Result result = scan(RecoveryScan.Depth.HEADERS);
        assertEquals(List.of(), result.records());
        assertEquals(Map.of(Kind.TRUNCATED, 1), result.quarantinedByKind());
    }

    @Test
    void eachRejectionKind_isCountedApart() throws IOException {
        FileDamage.flipBit(write(new RecordSpec(ROOT.child(1), ROOT, true), 1), 60, 0);
        FileDamage.truncate(write(new RecordSpec(ROOT.child(2), ROOT, true), 2), 100);
        FileDamage.putInt(write(new RecordSpec(ROOT.child(3), ROOT, true), 3), 4, 0);
        FileDamage.putInt(write(new RecordSpec(ROOT.child(4), ROOT, true), 4), 4, 99);
        try (RecordMemory source = RecordMemory.allocate(RecordIoContract.ODD, true).fill(5)) {
            io.write(new RecordSpec(ROOT.child(5), ROOT, true), RecordIoContract.ODD, source, dir);
        }
        write(new RecordSpec(ROOT.child(6), ROOT, true), 6);

        RecoveryScan.Result result = scan(RecoveryScan.Depth.HEADERS);
        assertEquals(Map.of(Kind.CORRUPT, 1, Kind.TRUNCATED, 1, Kind.TOO_OLD, 1, Kind.TOO_NEW, 1,
                Kind.LAYOUT_MISMATCH, 1), result.quarantinedByKind());
        assertEquals(1, result.records().size());
        assertEquals(ROOT.child(6), result.records().getFirst().spec().key());
        assertEquals(5, result.quarantined().size());
    }

    @Test
    void aDirectoryOfAnotherLayoutsRecordsOnly_isRefused_andNothingInItIsTouched() throws IOException {
        Path other;
        try (RecordMemory source = RecordMemory.allocate(RecordIoContract.ODD, true).fill(5)) {
            other = io.write(new RecordSpec(ROOT, null, true), RecordIoContract.ODD, source, dir).file();
        }
        byte[] before = Files.readAllBytes(other);
        Path leftover = Files.write(RecordFileNames.temporaryFile(RecordFileNames.recordFile(dir, ROOT.child(1))),
                new byte[] {1});

        RecoveryScan.OtherLayout refused = assertThrows(RecoveryScan.OtherLayout.class,
                () -> scan(RecoveryScan.Depth.HEADERS));
        assertEquals(1, refused.files());
        assertArrayEquals(before, Files.readAllBytes(other), "the record file stays as it was");
        assertTrue(Files.exists(leftover), "not even a temporary is deleted");
        assertFalse(Files.exists(dir.resolve(RecordFileNames.QUARANTINE_DIRECTORY)));
    }

    @Test
    void filesNotNamedAsSeleneNamesThem_areLeftAlone_whateverTheirSuffix() throws IOException {
        List<Path> foreign = List.of(dir.resolve("show.rec"), dir.resolve("draft.rec.tmp"), dir.resolve("notes.txt"),
                dir.resolve("tenant@12.rec"), dir.resolve("@00000000000000aa.rec"),
                dir.resolve("Notes@0123456789ABCDEF.rec.tmp"), dir.resolve("tenant@00000000000000AA.rec"));
        for (Path f : foreign) {
            Files.writeString(f, "not a record");
        }
        write(new RecordSpec(ROOT, null, true), 1);

        RecoveryScan.Result result = scan(RecoveryScan.Depth.HEADERS);
        assertEquals(1, result.records().size());
        assertEquals(0, result.temporariesDeleted());
        assertEquals(0, result.rejected());
        for (Path f : foreign) {
            assertEquals("not a record", Files.readString(f), f + " stays as it was");
        }
    }

    @Test
    void aRecordCopiedUnderAnUpperCaseName_isNotCounted_andStaysAsItWas() throws IOException {
        Path file = write(new RecordSpec(ROOT, null, true), 1);
        String name = file.getFileName().toString();
        int at = name.indexOf('@');
        Path upper = file.resolveSibling(name.substring(0, at + 1) + name.substring(at + 1, at + 17)
                .toUpperCase(java.util.Locale.ROOT) + ".rec");
        org.junit.jupiter.api.Assumptions.assumeFalse(upper.equals(file), "the key's hex has letters");
        Files.copy(file, upper);
        byte[] before = Files.readAllBytes(upper);

        RecoveryScan.Result result = scan(RecoveryScan.Depth.HEADERS);
        assertEquals(1, result.records().size(), "only the file a node reads and deletes by its name counts");
        assertArrayEquals(before, Files.readAllBytes(upper), "the other name is not Selene's: left alone");
    }

    @Test
    void fileRenamedToAnotherKey_isQuarantinedAsCorrupt() throws IOException {
        Path file = write(new RecordSpec(ROOT, null, true), 1);
        Files.move(file, RecordFileNames.recordFile(dir, ROOT.child(5)));
        RecoveryScan.Result result = scan(RecoveryScan.Depth.HEADERS);
        assertEquals(Map.of(Kind.CORRUPT, 1), result.quarantinedByKind());
    }

    @Test
    void quarantine_keepsEveryFile_whenNamesCollide() throws IOException {
        for (int round = 0; round < 2; round++) {
            Path file = write(new RecordSpec(ROOT, null, true), round);
            FileDamage.flipBit(file, 60, round);
            scan(RecoveryScan.Depth.HEADERS);
        }
        try (var quarantined = Files.list(dir.resolve(RecordFileNames.QUARANTINE_DIRECTORY))) {
            assertEquals(2, quarantined.count());
        }
    }

    @Test
    void scan_ignoresTheLockFileAndForeignFiles() throws IOException {
        Files.writeString(dir.resolve("README.txt"), "not a record");
        Files.createDirectories(dir.resolve("sub"));
        write(new RecordSpec(ROOT, null, true), 1);
        RecoveryScan.Result result = scan(RecoveryScan.Depth.FULL);
        assertEquals(1, result.records().size());
        assertEquals(0, result.rejected());
        assertTrue(Files.exists(dir.resolve("README.txt")));
    }

    @Test
    void scan_withAReleasedLock_isRefused() throws IOException {
        DirectoryLock lock = DirectoryLock.acquire(dir);
        lock.close();
        assertThrows(IllegalStateException.class, () -> RecoveryScan.run(lock, io, LAYOUT));
    }

    private Path write(RecordSpec spec, long seed) throws IOException {
        try (RecordMemory source = RecordMemory.allocate(LAYOUT, spec.hasRow()).fill(seed)) {
            return io.write(spec, LAYOUT, source, dir).file();
        }
    }

    private RecoveryScan.Result scan(RecoveryScan.Depth depth) throws IOException {
        try (DirectoryLock lock = DirectoryLock.acquire(dir)) {
            return RecoveryScan.run(lock, io, LAYOUT, depth);
        }
    }
}
