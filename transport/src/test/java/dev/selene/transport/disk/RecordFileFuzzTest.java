package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.codec.RecordFormatException.Kind;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.transport.disk.RecordCorpus.Check;
import dev.selene.transport.disk.RecordCorpus.Entry;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static dev.selene.engine.codec.RecordFileFormat.BLOCK_BYTES;
import static dev.selene.engine.codec.RecordFileFormat.HEADER_BYTES;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Damaged record files through {@link DirectRecordIo}'s read, verify and readHeader: each either returns a header
 * and fills the target with exactly the bytes of a record whose checked bytes the file holds, or fails with a
 * {@link RecordFormatException} of a kind; never another exception, never bytes of no record. A file that differs
 * from its record only where no checksum looks (share and footer padding) must read as that record.
 *
 * <p>"Checked" follows {@link RecordCorpus.Entry#mayBeTakenFor}: up to format version 2 the header block binds
 * nothing but its own checksum, so any valid header of the same shape may front a record's body and footer; the
 * disabled examples pin that gap until the format seals the header. A mutation may also rebuild another record's
 * whole file, which then reads as that record under its own header. Kinds are checked where one mutation fixes
 * them: a lost tail is TRUNCATED, garbage appended CORRUPT.
 */
@AddLifecycleHook(RequiresNativeIo.class)
class RecordFileFuzzTest {

    private static ScratchDirectory scratch;
    private static ExecutorService transfers;
    private static RecordIo io;
    private static final Map<Entry, RecordMemory> TARGETS = new HashMap<>();

    @BeforeContainer
    static void open() throws IOException {
        scratch = ScratchDirectory.create("record-mutations-");
        transfers = Executors.newFixedThreadPool(2, Thread.ofPlatform().name("mutation-transfer-", 0).daemon()
                .factory());
        // One block per vectored call, so that a record's transfers really fan out to the helpers.
        io = DirectRecordIo.withFileOps(NativeFileOps.INSTANCE, transfers, 3, BLOCK_BYTES);
        for (Entry entry : RecordCorpus.ALL) {
            TARGETS.put(entry, RecordMemory.allocate(entry.layout(), true));
        }
    }

    @AfterContainer
    static void close() throws IOException {
        TARGETS.values().forEach(RecordMemory::close);
        TARGETS.clear();
        if (transfers != null) {
            transfers.shutdownNow();
        }
        if (scratch != null) {
            scratch.close();
        }
    }

    @Property(tries = 1000)
    void mutatedFile_readsAsTheRecordItHolds_orFailsWithAKind(@ForAll("mutatedFiles") Mutated mutated)
            throws IOException {
        check(mutated);
    }

    @Example
    void corpusFiles_writtenByDirectRecordIo_areTheCorpusBytes() throws IOException {
        for (Entry entry : RecordCorpus.CURRENT) {
            try (RecordMemory source = RecordMemory.allocate(entry.layout(), entry.spec().hasRow())) {
                source.fill(entry.seed());
                Path file = io.write(entry.spec(), entry.layout(), source, scratch.path()).file();
                assertArrayEquals(entry.bytes(), Files.readAllBytes(file), entry.name());
                Files.delete(file);
            }
        }
    }

    @Example
    void footerPaddingAndRowPadding_flipped_readIntact() throws IOException {
        Entry entry = RecordCorpus.SMALL_CHILD_ROW;
        long lastRowShare = entry.bytes().length - 2L * BLOCK_BYTES;
        check(new Mutated(entry, List.of(new RecordMutation.FlipBits(List.of(
                (lastRowShare + entry.layout().pieceBytes(entry.header().pieceCount() - 1)) * 8,
                (entry.bytes().length - 1L) * 8 + 7))))).assertAll(new Outcome.Returned(entry.header()));
    }

    @Example
    void anotherRecordsWholeFile_readsAsThatRecord_underItsOwnHeader() throws IOException {
        Entry donor = RecordCorpus.SMALL_CHILD_ROW_2;
        check(new Mutated(RecordCorpus.SMALL_CHILD_ROW, List.of(
                new RecordMutation.Splice(donor, 0, donor.bytes().length, 0))))
                .assertAll(new Outcome.Returned(donor.header()));
    }

    /**
     * The header block only binds itself: the whole checksum runs over the header block, which ends with its own
     * CRC32C, so it is the same for every valid header (see {@link RecordCorpus#sealsHeader}). Another record's body
     * and footer behind this record's header read as this record.
     */
    @Example
    void bodyAndFooterOfAnotherRecord_behindThisRecordsHeader_areRejected() throws IOException {
        Entry donor = RecordCorpus.SMALL_CHILD_ROW_2;
        check(new Mutated(RecordCorpus.SMALL_CHILD_ROW, List.of(new RecordMutation.Splice(donor, HEADER_BYTES,
                donor.bytes().length - HEADER_BYTES, HEADER_BYTES)))).assertAll(new Outcome.Rejected(Kind.CORRUPT));
    }

    /** Shrunk from a failure of the property: another record's header block over this record's file. */
    @Example
    void headerBlockOfAnotherRecord_isRejected() throws IOException {
        check(new Mutated(RecordCorpus.SMALL_CHILD_ROW, List.of(new RecordMutation.HeaderFrom(
                RecordCorpus.SMALL_CHILD_ROW_2)))).assertAll(new Outcome.Rejected(Kind.CORRUPT));
    }

    /**
     * Shrunk from a failure of the property (seed -8139659960903875997): a header rewritten and resealed, row
     * bytes 0 in a record without a row, passes readHeader.
     */
    @Example
    void resealedHeaderField_isRejectedByReadHeader() throws IOException {
        Outcomes outcomes = check(new Mutated(RecordCorpus.SMALL_ROOT, List.of(
                new RecordMutation.ResealedHeaderField(24, Integer.BYTES, 0))));
        assertEquals(new Outcome.Rejected(Kind.CORRUPT), outcomes.readHeader());
    }

    @Provide
    Arbitrary<Mutated> mutatedFiles() {
        return Arbitraries.of(RecordCorpus.ALL).flatMap(e -> RecordMutations.of(e).map(ms -> new Mutated(e, ms)));
    }

    /** Checks every reader on the mutated file; returns what each did. */
    private static Outcomes check(Mutated mutated) throws IOException {
        Entry original = mutated.original();
        byte[] bytes = mutated.bytes();
        Path file = scratch.path().resolve("mutated.rec");
        Files.write(file, bytes);
        RecordMemory target = TARGETS.get(original).clear();

        Outcome read = Outcome.of("read", () -> io.read(file, original.layout(), target));
        Outcome verify = Outcome.of("verify", () -> io.verify(file, original.layout()));
        Outcome header = Outcome.of("readHeader", () -> io.readHeader(file));
        Files.delete(file);

        if (read instanceof Outcome.Returned(RecordHeader h)) {
            Entry held = takenFor(bytes, Check.BODY_AND_FRAME, h, "read");
            assertTrue(held.heldBy(target), "read returned " + h + " over " + held
                    + "'s file, but other bytes in the target");
            Statistics.label("read").collect(Outcome.taken(original, held, h));
        } else {
            Statistics.label("read").collect(read);
        }
        if (original.agrees(bytes, Check.BODY_AND_FRAME)) {
            assertEquals(new Outcome.Returned(original.header()), read,
                    "read rejected a file that differs from the original only where no checksum looks");
        }
        assertEquals(read, verify, "verify and read disagree");

        if (header instanceof Outcome.Returned(RecordHeader h)) {
            takenFor(bytes, Check.FRAME, h, "readHeader");
        }
        if (original.agrees(bytes, Check.FRAME)) {
            assertEquals(new Outcome.Returned(original.header()), header,
                    "readHeader rejected a file with the original's header, footer and length");
        }
        if (read instanceof Outcome.Returned) {
            assertEquals(read, header, "read returned a header that readHeader does not");
        }

        if (mutated.mutations().size() == 1) {
            Kind expected = switch (mutated.mutations().getFirst()) {
                case RecordMutation.Truncate t -> Kind.TRUNCATED;
                case RecordMutation.Extend e -> Kind.CORRUPT;
                default -> null;
            };
            if (expected != null) {
                for (Outcome outcome : List.of(read, verify, header)) {
                    assertEquals(new Outcome.Rejected(expected), outcome);
                }
            }
        }
        return new Outcomes(read, verify, header);
    }

    private static Entry takenFor(byte[] file, Check check, RecordHeader header, String call) {
        return RecordCorpus.takenFor(file, check, header).orElseGet(() -> fail(call + " returned " + header
                + " for a file that holds no record under that header"));
    }

    /** A corpus record's file after {@code mutations}. */
    record Mutated(Entry original, List<RecordMutation> mutations) {

        byte[] bytes() {
            return RecordMutation.applyAll(original.bytes(), mutations);
        }
    }

    /** What read, verify and readHeader did with one file. */
    record Outcomes(Outcome read, Outcome verify, Outcome readHeader) {

        /** Fails unless all three did {@code expected}. */
        void assertAll(Outcome expected) {
            assertEquals(new Outcomes(expected, expected, expected), this);
        }
    }

    /** What one reader call did: returned a header, or failed with a kind. */
    sealed interface Outcome {

        record Returned(RecordHeader header) implements Outcome {
        }

        record Rejected(Kind kind) implements Outcome {
        }

        /** A call of a reader that may fail only with a {@link RecordFormatException}. */
        @FunctionalInterface
        interface Call {
            RecordHeader run() throws IOException;
        }

        /** How a reader that returned {@code header} over {@code held}'s bytes took a mutation of {@code original}. */
        static String taken(Entry original, Entry held, RecordHeader header) {
            String bytes = held.equals(original) ? "the original's bytes" : "another record's bytes";
            String under = header.equals(held.header()) ? "its header"
                    : header.equals(original.header()) ? "the original's header" : "another header";
            return bytes + " under " + under;
        }

        /** Runs {@code call}; fails the property on any exception but a {@link RecordFormatException}. */
        static Outcome of(String name, Call call) {
            try {
                return new Returned(call.run());
            } catch (RecordFormatException e) {
                return new Rejected(e.kind());
            } catch (IOException | RuntimeException e) {
                throw new AssertionError(name + " threw " + e + " instead of a RecordFormatException", e);
            }
        }
    }
}
