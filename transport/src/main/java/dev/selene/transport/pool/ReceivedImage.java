package dev.selene.transport.pool;

import dev.selene.engine.codec.RecordHeader;

/**
 * A record image that arrived whole into its target shares, every checksum verified.
 *
 * @param header      the decoded header
 * @param headerBlock the header block as received (kept to serve the image again unchanged)
 * @param footerBlock the footer block as received
 * @param bytes       bytes of the whole image
 */
public record ReceivedImage(RecordHeader header, byte[] headerBlock, byte[] footerBlock, long bytes) {
}
