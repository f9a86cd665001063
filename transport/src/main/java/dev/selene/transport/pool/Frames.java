package dev.selene.transport.pool;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.nio.charset.StandardCharsets;

/**
 * The data plane's wire format. Every message starts with a frame header; a request is answered before the next
 * one is sent on the same connection.
 *
 * <pre>
 * FrameHeader --&gt; Magic:int ("SLDP"), Code:int, Handle:long, Length:long               (24 bytes, big-endian)
 * Request     --&gt; FrameHeader(PUT, handle, imageBytes), RecordImage     a pushed image
 *               | FrameHeader(GET, handle, 0)                            ask for an offered image
 *               | FrameHeader(RAW_PUT, 0, bytes), Byte^bytes             raw baseline
 *               | FrameHeader(RAW_GET, chunkBytes, bytes)                raw baseline
 * Response    --&gt; FrameHeader(OK, handle, 0)                             after a PUT or RAW_PUT arrived whole
 *               | FrameHeader(OK, handle, bytes), Byte^bytes             the image (GET) or raw bytes (RAW_GET)
 *               | FrameHeader(UNKNOWN | INVALID, handle, n), Reason      Reason: n bytes of UTF-8
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
    /** No such handle (it ended, was withdrawn, or never was). */
    static final int UNKNOWN = 1;
    /** The image was not the one expected, or failed a check. */
    static final int INVALID = 2;

    /** The longest reason a response carries. */
    static final int MAX_REASON_BYTES = 4096;

    private Frames() {
    }

    static ByteBuf header(int code, long handle, long length) {
        ByteBuf b = Unpooled.buffer(HEADER_BYTES);
        b.writeInt(MAGIC).writeInt(code).writeLong(handle).writeLong(length);
        return b;
    }

    static ByteBuf failure(int code, long handle, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, MAX_REASON_BYTES);
        return Unpooled.wrappedBuffer(header(code, handle, n), Unpooled.wrappedBuffer(text, 0, n));
    }

    /** A frame header gathered from however many reads it takes. */
    static final class Head {
        private final byte[] bytes = new byte[HEADER_BYTES];
        private int filled;
        int code;
        long handle;
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
            handle = b.readLong();
            length = b.readLong();
            return true;
        }
    }

    /** A failure reason gathered from however many reads it takes. */
    static final class Reason {
        private byte[] bytes;
        private int filled;

        void start(long length) {
            if (length < 0 || length > MAX_REASON_BYTES) {
                throw new TransferFailedException("the peer sent a reason of " + length + " bytes");
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
    }
}
