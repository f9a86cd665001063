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
        merge(parts);
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

    /**
     * Joins neighbours that are one run of native memory (a slot's ranks, and slots allocated side by side), so that
     * a record goes to the socket in a few large writes rather than one per share. A joined part keeps the first
     * part's memory scope, so it lives exactly as long as the memory it reads.
     */
    private static void merge(List<MemorySegment> parts) {
        List<MemorySegment> out = new ArrayList<>(parts.size());
        for (MemorySegment p : parts) {
            MemorySegment last = out.isEmpty() ? null : out.getLast();
            if (last != null && last.isNative() && p.isNative() && last.scope().equals(p.scope())
                    && last.address() + last.byteSize() == p.address()
                    && last.byteSize() + p.byteSize() <= MAX_JOINED_BYTES) {
                out.set(out.size() - 1, last.reinterpret(last.byteSize() + p.byteSize()));
            } else {
                out.add(p);
            }
        }
        parts.clear();
        parts.addAll(out);
    }

    /** The largest part a join makes: small enough that a write buffer's high-water mark still paces the sender. */
    long MAX_JOINED_BYTES = 1 << 20;

    /** {@code bytes} bytes in chunks of {@code chunkBytes}, taken from {@code ring} one after another, round it. */
    static Parts ring(MemorySegment ring, long bytes, int chunkBytes) {
        long perRing = ring.byteSize() / chunkBytes;
        long count = (bytes + chunkBytes - 1) / chunkBytes;
        if (count > Integer.MAX_VALUE || perRing < 1) {
            throw new IllegalArgumentException(bytes + " bytes in chunks of " + chunkBytes + " from a ring of "
                    + ring.byteSize());
        }
        return new Parts() {
            @Override
            public int count() {
                return (int) count;
            }

            @Override
            public MemorySegment part(int index) {
                long at = (long) index * chunkBytes;
                return ring.asSlice((index % perRing) * chunkBytes, Math.min(chunkBytes, bytes - at));
            }

            @Override
            public long bytes() {
                return bytes;
            }
        };
    }
}
