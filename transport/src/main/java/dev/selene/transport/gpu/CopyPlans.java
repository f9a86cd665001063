package dev.selene.transport.gpu;

import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.host.HostMemory;

/** Builds the copy plans that move whole records between device placements and host slots. */
public final class CopyPlans {

    private CopyPlans() {
    }

    /**
     * The plan that copies every rank's share of every piece of a record between {@code placement} and the host
     * slots {@code slots}: entry {@code piece × ranks + rank}, {@code layout.pieceBytes(piece)} bytes each (a
     * partly used last row piece moves only its used bytes).
     */
    public static CopyPlan forRecord(Layout layout, HostMemory host, SlotList slots, DevicePlacement placement,
                                     boolean hasRow) {
        if (!layout.equals(host.layout())) {
            throw new IllegalArgumentException("host memory holds layout " + host.layout().name()
                    + " but the record has layout " + layout.name());
        }
        int pieces = layout.slotsPerRecord(hasRow);
        int ranks = layout.ranks();
        if (slots.count() != pieces) {
            throw new IllegalArgumentException("record needs " + pieces + " slots (hasRow=" + hasRow + ") but got "
                    + slots.count());
        }
        if (placement.shares() != pieces * ranks) {
            throw new IllegalArgumentException("record needs " + pieces * ranks + " device shares (hasRow=" + hasRow
                    + ") but the placement has " + placement.shares());
        }
        long[] device = new long[pieces * ranks];
        long[] hostAddresses = new long[pieces * ranks];
        int[] lengths = new int[pieces * ranks];
        for (int piece = 0; piece < pieces; piece++) {
            int slot = slots.slot(piece);
            int bytes = layout.pieceBytes(piece);
            for (int rank = 0; rank < ranks; rank++) {
                int i = piece * ranks + rank;
                device[i] = placement.addresses()[i];
                hostAddresses[i] = host.address(slot, rank);
                lengths[i] = bytes;
            }
        }
        return new CopyPlan(device, hostAddresses, lengths);
    }
}
