package dev.selene.transport.pool;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.nio.charset.StandardCharsets;

/**
 * The data plane's wire format. Every message starts with a frame header; a request is answered before the next
 * one is sent on the same connection.
 *
 * <pre>
 * FrameHeader --&gt; Magic:int ("SLDP"), Code:int, Param:long, Length:long                (24 bytes, big-endian)
 * Exchange    --&gt; Push | Get | RawPush | RawGet                            one at a time on a connection
 * Push        --&gt; FrameHeader(PUT, 0, n), Spec (n bytes)                  see RecordWire
 *                 then FrameHeader(READY, 0, 0) from the store, RecordImage (ImageBytes), FrameHeader(OK | INVALID ...)
 *                 or FrameHeader(HELD, 0, 0) | Refusal from the store, and nothing more
 * Get         --&gt; FrameHeader(GET, 0, n), Key (n bytes)
 *                 then FrameHeader(OK, 0, imageBytes), RecordImage | Refusal(NOT_HELD)
 * RawPush     --&gt; FrameHeader(RAW_PUT, 0, bytes), Byte^bytes, then FrameHeader(OK, 0, 0)
 * RawGet      --&gt; FrameHeader(RAW_GET, chunkBytes, bytes), then FrameHeader(OK, 0, bytes), Byte^bytes
 * Refusal     --&gt; FrameHeader(NOT_HELD | INVALID | REFUSED, 0, n), Reason (n bytes of UTF-8)
 * </pre>
 */
final class Frames {

    /** "SLDP". */
    static final int MAGIC = 0x534C4450;
    static final int HEADER_BYTES = 24;

    static final int PUT = 1;
    static final int GET = 2;
    static final int RAW_PUT = 3;
    static final int RAW_GET = 4;

    static final int OK = 0;
    /** The store does not hold the record asked for. */
    static final int NOT_HELD = 1;
    /** The image was not the one expected, or failed a check. */
    static final int INVALID = 2;
    /** The store takes the pushed image: send it. */
    static final int READY = 3;
    /** The store holds the pushed record already: send nothing. */
    static final int HELD = 4;
    /** The store does not take the pushed record. */
    static final int REFUSED = 5;

    /** The longest record name a request carries. */
    static final int MAX_NAME_BYTES = 4096;

    /** The longest reason a response carries. */
    static final int MAX_REASON_BYTES = 4096;

    private Frames() {
    }

    static ByteBuf header(int code, long param, long length) {
        ByteBuf b = Unpooled.buffer(HEADER_BYTES);
        b.writeInt(MAGIC).writeInt(code).writeLong(param).writeLong(length);
        return b;
    }

    static ByteBuf failure(int code, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, MAX_REASON_BYTES);
        return Unpooled.wrappedBuffer(header(code, 0, n), Unpooled.wrappedBuffer(text, 0, n));
    }

    /** A request header followed by its record name. */
    static ByteBuf request(int code, ByteBuf name) {
        return Unpooled.wrappedBuffer(header(code, 0, name.readableBytes()), name);
    }

    /** A frame header gathered from however many reads it takes. */
    static final class Head {
        private final byte[] bytes = new byte[HEADER_BYTES];
        private int filled;
        int code;
        long param;
        long length;

        /** Takes header bytes from {@code in}: true once a whole header is in (and then starts afresh). */
        boolean read(ByteBuf in) {
            int n = Math.min(HEADER_BYTES - filled, in.readableBytes());
            in.readBytes(bytes, filled, n);
            filled += n;
            if (filled < HEADER_BYTES) {
                return false;
            }
            filled = 0;
            ByteBuf b = Unpooled.wrappedBuffer(bytes);
            if (b.readInt() != MAGIC) {
                throw new TransferFailedException("the peer does not speak the data plane's protocol (bad magic)");
            }
            code = b.readInt();
            param = b.readLong();
            length = b.readLong();
            return true;
        }
    }

    /** A failure reason or a record name, gathered from however many reads it takes. */
    static final class Block {
        private byte[] bytes;
        private int filled;

        void start(long length) {
            if (length < 0 || length > Math.max(MAX_REASON_BYTES, MAX_NAME_BYTES)) {
                throw new TransferFailedException("the peer sent a reason or name of " + length + " bytes");
            }
            bytes = new byte[(int) length];
            filled = 0;
        }

        /** Takes reason bytes from {@code in}: true once the whole reason is in. */
        boolean read(ByteBuf in) {
            int n = Math.min(bytes.length - filled, in.readableBytes());
            in.readBytes(bytes, filled, n);
            filled += n;
            return filled == bytes.length;
        }

        String text() {
            return new String(bytes, StandardCharsets.UTF_8);
        }

        ByteBuf buffer() {
            return Unpooled.wrappedBuffer(bytes);
        }
    }
}
