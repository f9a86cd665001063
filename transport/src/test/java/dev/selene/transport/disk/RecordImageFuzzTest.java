package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.RecordCorpus.Check;
import dev.selene.transport.disk.RecordCorpus.Entry;
import dev.selene.transport.disk.RecordFileFuzzTest.Outcome;
import dev.selene.transport.pool.RecordImage;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.selene.engine.codec.RecordFileFormat.HEADER_BYTES;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Damaged record images through {@link RecordImage.Reader}: the damage of {@link RecordFileFuzzTest} to the image's
 * bytes, which are then cut where the original's chunks end, and damage to the chunk sequence itself (a chunk lost,
 * repeated, swapped or taken from another record's image). The reader either finishes with a header, the target
 * holding exactly the bytes of a record whose image the chunks are (footer padding aside: an image's share padding
 * must be zero; the header as {@link RecordCorpus.Entry#mayBeTakenFor} allows), or fails with a
 * {@link RecordFormatException} of a kind and is unusable after; never another exception. The original's image with
 * only its footer padding changed must be taken.
 */
class RecordImageFuzzTest {

    private static final Map<Entry, RecordMemory> TARGETS = new HashMap<>();

    @BeforeContainer
    static void allocate() {
        for (Entry entry : RecordCorpus.CURRENT) {
            TARGETS.put(entry, RecordMemory.allocate(entry.layout(), true));
        }
    }

    @AfterContainer
    static void free() {
        TARGETS.values().forEach(RecordMemory::close);
        TARGETS.clear();
    }

    @Property(tries = 2000)
    void mutatedImage_finishesAsTheRecordItHolds_orFailsWithAKind(@ForAll("mutatedImages") MutatedImage image) {
        check(image);
    }

    @Example
    void footerPadding_changed_finishesIntact() {
        Entry entry = RecordCorpus.SMALL_CHILD_ROW;
        Outcome outcome = check(new MutatedImage(entry, List.of(
                new RecordMutation.FlipBits(List.of((entry.bytes().length - 1L) * 8))), List.of(), true));
        assertEquals(new Outcome.Returned(entry.header()), outcome);
    }

    @Example
    void rowPadding_changed_failsCorrupt() {
        Entry entry = RecordCorpus.SMALL_CHILD_ROW;
        long lastShare = entry.footerOffset() - entry.layout().pageBytes();
        long padding = lastShare + entry.layout().pieceBytes(entry.header().pieceCount() - 1);
        Outcome outcome = check(new MutatedImage(entry, List.of(new RecordMutation.FlipBits(List.of(padding * 8))),
                List.of(), true));
        assertEquals(new Outcome.Rejected(RecordFormatException.Kind.CORRUPT), outcome);
    }

    /**
     * The dangerous half of the unsealed header: a reader expecting this record's key takes another record's pieces
     * and footer behind this record's header chunk, and puts the other record's bytes in the target.
     */
    @Example
    void piecesAndFooterOfAnotherRecord_behindTheExpectedHeader_areRejected() {
        Entry donor = RecordCorpus.SMALL_CHILD_ROW_2;
        Outcome outcome = check(new MutatedImage(RecordCorpus.SMALL_CHILD_ROW, List.of(new RecordMutation.Splice(
                donor, HEADER_BYTES, donor.bytes().length - HEADER_BYTES, HEADER_BYTES)), List.of(), true));
        assertEquals(new Outcome.Rejected(RecordFormatException.Kind.CORRUPT), outcome);
    }

    /** Shrunk from a failure of the property (seed 3851393006775143255). */
    @Example
    void headerChunkOfAnotherRecord_isRejected() {
        Outcome outcome = check(new MutatedImage(RecordCorpus.SMALL_CHILD_ROW, List.of(
                new RecordMutation.HeaderFrom(RecordCorpus.SMALL_CHILD_ROW_2)), List.of(), false));
        assertEquals(new Outcome.Rejected(RecordFormatException.Kind.CORRUPT), outcome);
    }

    @Provide
    Arbitrary<MutatedImage> mutatedImages() {
        return Arbitraries.of(RecordCorpus.CURRENT).flatMap(e -> Combinators.combine(
                RecordMutations.one(e).list().ofMaxSize(3),
                chunkMutation(e).list().ofMaxSize(2),
                Arbitraries.of(true, false))
                .filter((bytes, chunks, expectKey) -> !bytes.isEmpty() || !chunks.isEmpty())
                .as((bytes, chunks, expectKey) -> new MutatedImage(e, bytes, chunks, expectKey)));
    }

    private static Arbitrary<ChunkMutation> chunkMutation(Entry target) {
        int chunks = RecordImage.chunkCount(target.layout(), target.spec().hasRow());
        Arbitrary<Integer> chunk = Arbitraries.integers().between(0, chunks);
        Arbitrary<ChunkMutation> fromDonor = Arbitraries.of(RecordCorpus.CURRENT.stream()
                        .filter(e -> !e.equals(target)).toList())
                .flatMap(d -> Combinators.combine(chunk, Arbitraries.integers().between(0,
                        RecordImage.chunkCount(d.layout(), d.spec().hasRow()) - 1))
                        .as((at, from) -> new ChunkMutation.FromDonor(at, d, from)));
        return Arbitraries.oneOf(
                chunk.map(ChunkMutation.Drop::new),
                chunk.map(ChunkMutation.Repeat::new),
                Combinators.combine(chunk, chunk).as(ChunkMutation.Swap::new),
                fromDonor);
    }

    /** Feeds the mutated chunks to a reader and checks the outcome; returns it. */
    private static Outcome check(MutatedImage image) {
        Entry original = image.original();
        List<byte[]> chunks = image.chunks();
        RecordMemory target = TARGETS.get(original).clear();
        RecordImage.Reader reader = new RecordImage.Reader(original.layout(),
                image.expectKey() ? original.spec().key() : null, target);
        Outcome outcome = Outcome.of("reader", () -> {
            for (byte[] chunk : chunks) {
                reader.accept(chunk);
            }
            return reader.finish();
        });
        byte[] concatenated = concat(chunks);

        if (outcome instanceof Outcome.Returned(RecordHeader h)) {
            Entry held = RecordCorpus.takenFor(concatenated, Check.IMAGE, h)
                    .filter(e -> canonicallyCut(chunks, e))
                    .orElseGet(() -> fail("the reader finished with " + h + " over chunks that are no record's image"
                            + " under that header"));
            assertTrue(!image.expectKey() || h.key().equals(original.spec().key()), "the reader expecting "
                    + original.spec().key() + " finished with " + h.key());
            assertTrue(held.heldBy(target), "the reader finished with " + h + " over " + held
                    + "'s image, but other bytes in the target");
            Statistics.label("reader").collect(Outcome.taken(original, held, h));
        } else {
            Statistics.label("reader").collect(outcome);
            assertThrows(IllegalStateException.class, reader::finish, "a reader that failed is usable again");
        }
        if (original.agrees(concatenated, Check.IMAGE) && canonicallyCut(chunks, original)) {
            assertEquals(new Outcome.Returned(original.header()), outcome,
                    "the reader rejected the original's image with only its footer padding changed");
        }
        return outcome;
    }

    /** Whether {@code chunks} are as long as {@code entry}'s image's chunks, one for one. */
    private static boolean canonicallyCut(List<byte[]> chunks, Entry entry) {
        Layout layout = entry.layout();
        boolean hasRow = entry.spec().hasRow();
        if (chunks.size() != RecordImage.chunkCount(layout, hasRow)) {
            return false;
        }
        for (int i = 0; i < chunks.size(); i++) {
            if (chunks.get(i).length != RecordImage.chunkBytes(layout, hasRow, i)) {
                return false;
            }
        }
        return true;
    }

    private static byte[] concat(List<byte[]> chunks) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        chunks.forEach(out::writeBytes);
        return out.toByteArray();
    }

    /**
     * Cuts an image's bytes where {@code entry}'s chunks end: a short image gives a short last chunk, a long one an
     * extra chunk.
     */
    static List<byte[]> cut(byte[] image, Entry entry) {
        Layout layout = entry.layout();
        boolean hasRow = entry.spec().hasRow();
        List<byte[]> chunks = new ArrayList<>();
        int at = 0;
        for (int i = 0; i < RecordImage.chunkCount(layout, hasRow) && at < image.length; i++) {
            int end = Math.min(image.length, at + RecordImage.chunkBytes(layout, hasRow, i));
            chunks.add(Arrays.copyOfRange(image, at, end));
            at = end;
        }
        if (at < image.length) {
            chunks.add(Arrays.copyOfRange(image, at, image.length));
        }
        return chunks;
    }

    /**
     * A corpus record's image, its bytes mutated and cut, then its chunk sequence mutated, read by a reader that
     * expects the original's key or any key.
     */
    record MutatedImage(Entry original, List<RecordMutation> byteMutations, List<ChunkMutation> chunkMutations,
                        boolean expectKey) {

        List<byte[]> chunks() {
            List<byte[]> chunks = new ArrayList<>(cut(RecordMutation.applyAll(original.bytes(), byteMutations),
                    original));
            for (ChunkMutation mutation : chunkMutations) {
                mutation.apply(chunks);
            }
            return chunks;
        }
    }

    /** A change to an image's chunk sequence; chunk indexes past the end are clipped to it. */
    sealed interface ChunkMutation {

        void apply(List<byte[]> chunks);

        record Drop(int chunk) implements ChunkMutation {
            @Override
            public void apply(List<byte[]> chunks) {
                if (chunk < chunks.size()) {
                    chunks.remove(chunk);
                }
            }
        }

        record Repeat(int chunk) implements ChunkMutation {
            @Override
            public void apply(List<byte[]> chunks) {
                if (chunk < chunks.size()) {
                    chunks.add(chunk, chunks.get(chunk).clone());
                }
            }
        }

        record Swap(int a, int b) implements ChunkMutation {
            @Override
            public void apply(List<byte[]> chunks) {
                if (a < chunks.size() && b < chunks.size()) {
                    byte[] first = chunks.get(a);
                    chunks.set(a, chunks.get(b));
                    chunks.set(b, first);
                }
            }
        }

        /** Puts chunk {@code from} of {@code donor}'s image in at {@code at} (appended past the end). */
        record FromDonor(int at, Entry donor, int from) implements ChunkMutation {
            @Override
            public void apply(List<byte[]> chunks) {
                byte[] chunk = cut(donor.bytes(), donor).get(from);
                if (at < chunks.size()) {
                    chunks.set(at, chunk);
                } else {
                    chunks.add(chunk);
                }
            }
        }
    }
}
