package dev.selene.transport.pool;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.layout.Layout;

import java.util.Objects;

/**
 * A record image to send, read straight from the memory its pieces live in: the header and footer blocks (see
 * {@link RecordImage#frame}) and where each rank's share of each piece is. The shares must stay unchanged until the
 * transfer that sends them has ended.
 *
 * @param layout      the record's layout
 * @param hasRow      whether the record carries a row
 * @param headerBlock the image's first chunk
 * @param footerBlock the image's last chunk
 * @param source      the pieces' shares
 */
public record OutgoingImage(Layout layout, boolean hasRow, byte[] headerBlock, byte[] footerBlock,
                            PieceShares source) {

    public OutgoingImage {
        Objects.requireNonNull(layout, "layout");
        Objects.requireNonNull(headerBlock, "headerBlock");
        Objects.requireNonNull(footerBlock, "footerBlock");
        Objects.requireNonNull(source, "source");
    }

    /** Bytes of the whole image (the record file's length). */
    public long bytes() {
        return RecordImage.imageBytes(layout, hasRow);
    }
}
