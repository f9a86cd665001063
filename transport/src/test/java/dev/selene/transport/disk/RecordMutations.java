package dev.selene.transport.disk;

import dev.selene.transport.disk.RecordCorpus.Entry;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

import java.util.List;

import static dev.selene.engine.codec.RecordFileFormat.BLOCK_BYTES;

/** jqwik generators of {@link RecordMutation}s of one corpus record, shrinking toward fewer and smaller ones. */
final class RecordMutations {

    /** Header fields a resealed mutation rewrites: offset and width, version through parent hash. */
    private static final List<Field> HEADER_FIELDS = List.of(new Field(4, 4), new Field(8, 4), new Field(12, 4),
            new Field(16, 4), new Field(20, 4), new Field(24, 4), new Field(28, 4), new Field(32, 4),
            new Field(36, 4), new Field(40, 8), new Field(48, 8), new Field(56, 8));

    private RecordMutations() {
    }

    /** One to three mutations of {@code target}'s file, splicing from the other corpus records. */
    static Arbitrary<List<RecordMutation>> of(Entry target) {
        return one(target).list().ofMinSize(1).ofMaxSize(3);
    }

    /** One mutation of {@code target}'s file. */
    static Arbitrary<RecordMutation> one(Entry target) {
        int length = target.bytes().length;
        List<Entry> donors = RecordCorpus.ALL.stream().filter(e -> !e.equals(target)).toList();
        Arbitrary<Integer> offset = offset(target);
        Arbitrary<Entry> donor = Arbitraries.of(donors);
        return Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.longs().between(0, length * 8L - 1).list().ofMinSize(1)
                        .ofMaxSize(8).map(RecordMutation.FlipBits::new)),
                Tuple.of(1, Arbitraries.integers().between(0, length - 1)
                        .map(RecordMutation.Truncate::new)),
                Tuple.of(1, Combinators.combine(Arbitraries.integers().between(1, 3 * BLOCK_BYTES),
                        Arbitraries.longs()).as(RecordMutation.Extend::new)),
                Tuple.of(2, splice(donor, offset)),
                Tuple.of(1, donor.map(RecordMutation.HeaderFrom::new)),
                Tuple.of(1, donor.map(RecordMutation.FooterFrom::new)),
                Tuple.of(2, Combinators.combine(offset, Arbitraries.integers().between(1, 2 * BLOCK_BYTES))
                        .as(RecordMutation.Zero::new)),
                Tuple.of(1, resealedHeaderField()));
    }

    /**
     * Any offset in the file, half the time at a block boundary or in the header or footer block, where the
     * structure is.
     */
    private static Arbitrary<Integer> offset(Entry target) {
        int length = target.bytes().length;
        int blocks = length / BLOCK_BYTES;
        return Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.integers().between(0, length - 1)),
                Tuple.of(1, Arbitraries.integers().between(0, blocks - 1).map(b -> b * BLOCK_BYTES)),
                Tuple.of(1, Arbitraries.integers().between(0, BLOCK_BYTES - 1)),
                Tuple.of(1, Arbitraries.integers().between(target.footerOffset(), length - 1)));
    }

    /** A range of another record's file, copied to the same offset (a misdirected write) or anywhere. */
    private static Arbitrary<RecordMutation> splice(Arbitrary<Entry> donor, Arbitrary<Integer> at) {
        return donor.flatMap(d -> Combinators.combine(Arbitraries.integers().between(0, d.bytes().length - 1),
                Arbitraries.integers().between(1, d.bytes().length), Arbitraries.of(true, false), at)
                .as((from, length, sameOffset, to) -> new RecordMutation.Splice(d, from, length,
                        sameOffset ? from : to)));
    }

    private static Arbitrary<RecordMutation> resealedHeaderField() {
        Arbitrary<Long> value = Arbitraries.oneOf(Arbitraries.longs(), Arbitraries.longs().between(-2, 70_000));
        return Combinators.combine(Arbitraries.of(HEADER_FIELDS), value)
                .as((field, v) -> new RecordMutation.ResealedHeaderField(field.offset(), field.width(), v));
    }

    private record Field(int offset, int width) {
    }
}
