package dev.selene.transport.pool;

import dev.selene.engine.layout.Layout;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/** What a transfer sends, as a sequence of memory regions written to the socket as they are (never copied). */
interface Parts {

    int count();

    MemorySegment part(int index);

    /** Bytes of all parts together. */
    long bytes();

    /**
     * A record image: the header block, each rank's share of each piece (its used bytes straight from the share,
     * then zero padding to the page), the footer block.
     */
    static Parts of(OutgoingImage image) {
        Layout layout = image.layout();
        List<MemorySegment> parts = new ArrayList<>();
        parts.add(MemorySegment.ofArray(image.headerBlock()));
        int pieces = RecordImage.chunkCount(layout, image.hasRow()) - 2;
        for (int piece = 0; piece < pieces; piece++) {
            int used = layout.pieceBytes(piece);
            for (int rank = 0; rank < layout.ranks(); rank++) {
                parts.add(image.source().share(piece, rank).asSlice(0, used));
                for (long pad = layout.pageBytes() - used; pad > 0; ) {
                    long n = Math.min(pad, RecordImage.ZEROS.byteSize());
                    parts.add(RecordImage.ZEROS.asSlice(0, n));
                    pad -= n;
                }
            }
        }
        parts.add(MemorySegment.ofArray(image.footerBlock()));
        long bytes = 0;
        for (MemorySegment p : parts) {
            bytes += p.byteSize();
        }
        if (bytes != image.bytes()) {
            throw new IllegalStateException("an image of " + bytes + " bytes where its layout says " + image.bytes());
        }
        long total = bytes;
        return new Parts() {
            @Override
            public int count() {
                return parts.size();
            }

            @Override
            public MemorySegment part(int index) {
                return parts.get(index);
            }

            @Override
            public long bytes() {
                return total;
            }
        };
    }

    /** {@code bytes} bytes in chunks of {@code source}'s size, each chunk {@code source} itself (the last cut short). */
    static Parts repeating(MemorySegment source, long bytes) {
        long chunk = source.byteSize();
        long count = (bytes + chunk - 1) / chunk;
        if (count > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(bytes + " bytes in chunks of " + chunk + " are too many chunks");
        }
        return new Parts() {
            @Override
            public int count() {
                return (int) count;
            }

            @Override
            public MemorySegment part(int index) {
                long at = index * chunk;
                return source.asSlice(0, Math.min(chunk, bytes - at));
            }

            @Override
            public long bytes() {
                return bytes;
            }
        };
    }
}
