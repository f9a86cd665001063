package dev.selene.transport.gpu;

import dev.selene.engine.layout.Layout;

import java.util.Arrays;
import java.util.Objects;

/**
 * Where one record's shares live in device memory: the address of each (piece, rank) share at index
 * {@code piece × ranks + rank}, pieces being the record's pages first, then its row pieces.
 *
 * <p>The array is owned by the placement and must not be changed after construction.
 *
 * @param addresses device address of each share
 */
public record DevicePlacement(long[] addresses) {

    public DevicePlacement {
        Objects.requireNonNull(addresses, "addresses");
    }

    /**
     * A record packed from {@code base}: share (piece, rank) at {@code base + (piece × ranks + rank) × pageBytes}.
     * Every share, a partly used last row piece included, gets a full page so that every share keeps page
     * alignment; {@link #bytesNeeded} bytes must be allocated from {@code base}.
     */
    public static DevicePlacement contiguous(Layout layout, long base, boolean hasRow) {
        int shares = shares(layout, hasRow);
        long[] addresses = new long[shares];
        for (int i = 0; i < shares; i++) {
            addresses[i] = base + (long) i * layout.pageBytes();
        }
        return new DevicePlacement(addresses);
    }

    /** Device bytes a {@link #contiguous} placement of such a record spans. */
    public static long bytesNeeded(Layout layout, boolean hasRow) {
        return (long) shares(layout, hasRow) * layout.pageBytes();
    }

    /** Number of shares placed. */
    public int shares() {
        return addresses.length;
    }

    /** Whether the placement has room for the record's row pieces as well as its pages. */
    public boolean holdsRow(Layout layout) {
        return layout.rowPieces() > 0 && addresses.length == shares(layout, true);
    }

    /** The shares of the record's pages alone, without its row pieces ({@code this} when it has none). */
    public DevicePlacement pagesOnly(Layout layout) {
        int pages = shares(layout, false);
        return addresses.length <= pages ? this : new DevicePlacement(Arrays.copyOf(addresses, pages));
    }

    /** Device address of rank {@code rank}'s share of piece {@code piece}. */
    public long address(Layout layout, int piece, int rank) {
        return addresses[piece * layout.ranks() + rank];
    }

    @Override
    public String toString() {
        return addresses.length == 0 ? "DevicePlacement[]"
                : "DevicePlacement[" + addresses.length + " shares from 0x" + Long.toHexString(addresses[0]) + "]";
    }

    private static int shares(Layout layout, boolean hasRow) {
        return layout.slotsPerRecord(hasRow) * layout.ranks();
    }
}
