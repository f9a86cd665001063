package dev.selene.transport.disk;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.codec.RecordFormatException.Kind;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.RecordCorpus.Check;
import dev.selene.transport.disk.RecordCorpus.Entry;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The recovery scan over a directory of intact record files, damaged ones (the mutations of
 * {@link RecordFileFuzzTest}) and intact files of other layouts: no exception escapes; every file is either
 * recovered, as a record whose bytes it holds wherever the scan's depth looks (header, footer and length for
 * {@link RecoveryScan.Depth#HEADERS}, every checksummed byte for {@link RecoveryScan.Depth#FULL}; the header as
 * {@link RecordCorpus.Entry#mayBeTakenFor} allows), or quarantined byte for byte and counted; and a file that agrees
 * with its record in all the scan checks is recovered.
 */
@AddLifecycleHook(RequiresNativeIo.class)
class RecoveryScanFuzzTest {

    private static final Layout LAYOUT = Layout.small();
    /** Valid records the scan must quarantine all the same: written under another layout. */
    private static final List<Entry> OTHER_LAYOUTS = List.of(RecordCorpus.ODD_CHILD_ROW, RecordCorpus.LEGACY_V1);

    private static ScratchDirectory scratch;
    private static RecordIo io;
    private static Level scanLogLevel;

    @BeforeContainer
    static void open() throws IOException {
        scratch = ScratchDirectory.create("scan-mutations-");
        io = DirectRecordIo.sequential();
        Logger scanLog = (Logger) LoggerFactory.getLogger(RecoveryScan.class);
        scanLogLevel = scanLog.getLevel();
        scanLog.setLevel(Level.ERROR);
    }

    @AfterContainer
    static void close() throws IOException {
        ((Logger) LoggerFactory.getLogger(RecoveryScan.class)).setLevel(scanLogLevel);
        if (scratch != null) {
            scratch.close();
        }
    }

    @Property(tries = 200)
    void scan_recoversEveryIntactFile_andQuarantinesEveryOther(@ForAll("directories") Directory directory)
            throws IOException {
        scratch.empty();
        Path dir = scratch.path();
        Check check = directory.depth() == RecoveryScan.Depth.FULL ? Check.BODY_AND_FRAME : Check.FRAME;
        List<Written> written = new ArrayList<>();
        for (int i = 0; i < RecordCorpus.SMALL.size(); i++) {
            Entry entry = RecordCorpus.SMALL.get(i);
            switch (directory.files().get(i)) {
                case FileState.Plain.ABSENT -> {
                }
                case FileState.Plain.INTACT -> written.add(write(dir, entry, entry.bytes()));
                case FileState.Mutated m -> written.add(write(dir, entry, RecordMutation.applyAll(entry.bytes(),
                        m.mutations())));
            }
        }
        if (directory.otherLayouts()) {
            for (Entry entry : OTHER_LAYOUTS) {
                written.add(write(dir, entry, entry.bytes()));
            }
        }

        RecoveryScan.Result result;
        try (DirectoryLock lock = DirectoryLock.acquire(dir)) {
            result = RecoveryScan.run(lock, io, LAYOUT, directory.depth());
        } catch (RecoveryScan.OtherLayout refused) {
            // Record files of another layout and none valid under this one: refused, and nothing touched.
            for (Written w : written) {
                assertFalse(w.entry().agrees(w.bytes(), check) && LAYOUT.equals(w.entry().layout()),
                        w.name() + " is intact under this layout, yet the directory was refused");
                assertArrayEquals(w.bytes(), Files.readAllBytes(dir.resolve(w.name())), w.name() + " was touched");
            }
            assertFalse(Files.exists(dir.resolve(RecordFileNames.QUARANTINE_DIRECTORY)), "nothing quarantined");
            Statistics.label("recovered").collect("refused: another layout's records only");
            return;
        } catch (IOException | RuntimeException e) {
            throw new AssertionError("the scan threw " + e, e);
        }

        Set<String> recovered = new TreeSet<>();
        for (RecoveryScan.Recovered r : result.records()) {
            Written w = written.stream().filter(f -> f.name().equals(r.file().getFileName().toString()))
                    .findFirst().orElseThrow(() -> new AssertionError("recovered a file never written: " + r));
            RecordHeader header = io.readHeader(dir.resolve(w.name()));
            assertEquals(header.spec(), r.spec());
            assertTrue(RecordFileFormat.sameShape(LAYOUT, header.layout()), "recovered " + header + " under " + LAYOUT);
            assertEquals(w.bytes().length, r.fileBytes());
            java.util.Optional<Entry> held = RecordCorpus.takenFor(w.bytes(), check, header);
            if (held.isEmpty()) {
                // A header scan reads headers and footers, not bodies. A forged legacy file (a header resealed to
                // claim version 1 or 2, which seal nothing, beside a footer of that version from another record)
                // passes it; the full read that every restore makes must then refuse it, so no byte of it is served.
                assertEquals(Check.FRAME, check, () -> "recovered " + w.name() + " as " + header
                        + ", but it holds no record under that header");
                assertTrue(header.version() < RecordFileFormat.VERSION_SEALED_HEADER, () -> "recovered " + w.name()
                        + " as " + header + ", but it holds no record under that header (a sealed version)");
                assertThrows(RecordFormatException.class, () -> io.verify(dir.resolve(w.name()), LAYOUT),
                        () -> w.name() + " passed the header scan as " + header + " and the full read too");
                Statistics.label("recovered").collect("forged legacy header: refused by the full read");
            } else {
                Statistics.label("recovered").collect(RecordFileFuzzTest.Outcome.taken(w.entry(), held.get(), header)
                        + (Arrays.equals(w.bytes(), w.entry().bytes()) ? "" : ", damaged"));
            }
            recovered.add(w.name());
        }
        Set<String> quarantined = result.quarantined().stream().map(q -> q.getFileName().toString())
                .collect(Collectors.toCollection(TreeSet::new));
        for (Written w : written) {
            if (w.entry().agrees(w.bytes(), check) && LAYOUT.equals(w.entry().layout())) {
                assertTrue(recovered.contains(w.name()), w.name() + " was not recovered, though intact in all that "
                        + "a " + directory.depth() + " scan checks");
            } else if (!recovered.contains(w.name())) {
                assertTrue(quarantined.contains(w.name()), w.name() + " was neither recovered nor quarantined");
                assertFalse(Files.exists(dir.resolve(w.name())), w.name() + " stayed in place");
                assertArrayEquals(w.bytes(), Files.readAllBytes(dir.resolve(RecordFileNames.QUARANTINE_DIRECTORY)
                        .resolve(w.name())), w.name() + " changed in quarantine");
            }
        }
        assertEquals(written.size(), recovered.size() + quarantined.size(), "files recovered and quarantined");
        assertEquals(0, result.unreadable());
        assertEquals(quarantined.size(), result.rejected());
        if (directory.otherLayouts()) {
            assertTrue(result.quarantinedByKind().getOrDefault(Kind.LAYOUT_MISMATCH, 0) >= OTHER_LAYOUTS.size());
        }
        result.quarantinedByKind().forEach((kind, count) -> {
            for (int n = 0; n < count; n++) {
                Statistics.label("quarantined").collect(kind);
            }
        });
    }

    /**
     * Shrunk from a failure of the property (seed 236719356427024212): a header scan recovers a file whose footer,
     * and so whose body checksums, belong to another record.
     */
    @Example
    void footerOfAnotherRecord_isQuarantinedByAHeaderScan() throws IOException {
        scratch.empty();
        Entry entry = RecordCorpus.SMALL_CHILD_ROW_2;
        write(scratch.path(), entry, new RecordMutation.FooterFrom(RecordCorpus.SMALL_CHILD_ROW)
                .apply(entry.bytes().clone()));
        try (DirectoryLock lock = DirectoryLock.acquire(scratch.path())) {
            RecoveryScan.Result result = RecoveryScan.run(lock, io, LAYOUT, RecoveryScan.Depth.HEADERS);
            assertEquals(List.of(), result.records());
            assertEquals(Map.of(Kind.CORRUPT, 1), result.quarantinedByKind());
        }
    }

    @Provide
    Arbitrary<Directory> directories() {
        List<Arbitrary<FileState>> files = RecordCorpus.SMALL.stream().map(e -> Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just((FileState) FileState.Plain.ABSENT)),
                Tuple.of(2, Arbitraries.just((FileState) FileState.Plain.INTACT)),
                Tuple.of(3, RecordMutations.of(e).map(m -> (FileState) new FileState.Mutated(m))))).toList();
        return Combinators.combine(Combinators.combine(files).as(List::copyOf),
                Arbitraries.of(RecoveryScan.Depth.class), Arbitraries.of(true, false)).as(Directory::new);
    }

    private static Written write(Path dir, Entry entry, byte[] bytes) throws IOException {
        Path file = RecordFileNames.recordFile(dir, entry.spec().key());
        Files.write(file, bytes);
        return new Written(file.getFileName().toString(), entry, bytes);
    }

    /** What one small-layout record's file is in the scanned directory. */
    sealed interface FileState {

        enum Plain implements FileState { ABSENT, INTACT }

        record Mutated(List<RecordMutation> mutations) implements FileState {
        }
    }

    /**
     * A directory to scan: a state per record of {@link RecordCorpus#SMALL}, whether it also holds files of other
     * layouts, and the depth of the scan.
     */
    record Directory(List<FileState> files, RecoveryScan.Depth depth, boolean otherLayouts) {
    }

    private record Written(String name, Entry entry, byte[] bytes) {
    }
}
