package dev.selene.transport.pool;

import dev.selene.engine.codec.RecordFormatException;
import io.netty.channel.Channel;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * One request and its answer on a client connection: a push, a fetch, or a raw baseline. Its future completes on
 * the connection's event loop once the exchange no longer touches its memory.
 */
abstract class ClientExchange<T> implements Transfer<T> {

    final CompletableFuture<T> done = new CompletableFuture<>();
    private volatile Channel channel;
    private volatile String aborted;

    @Override
    public CompletableFuture<T> done() {
        return done;
    }

    @Override
    public void abort(String reason) {
        aborted = reason;
        Channel c = channel;
        if (c != null) {
            c.eventLoop().execute(() -> {
                ClientHandler h = c.pipeline().get(ClientHandler.class);
                if (h != null) {
                    h.abort(this, reason);
                }
            });
        }
    }

    /** Why the exchange was aborted before it began, or null. */
    String aborted() {
        return aborted;
    }

    void bind(Channel c) {
        channel = c;
    }

    /** The request's frame header. */
    abstract io.netty.buffer.ByteBuf request();

    /** What follows the request header (a push's image), or null. */
    Parts body() {
        return null;
    }

    /** Whether an OK answer carries bytes. */
    abstract boolean answerHasBody();

    /** Takes answer body bytes. */
    void take(MemorySegment bytes) throws RecordFormatException {
        throw new IllegalStateException("no body expected");
    }

    /** The value once the answer arrived whole (and the body, if any, was sent whole). */
    abstract T finish() throws RecordFormatException;

    /** Pushes an image under a handle the receiver handed out. */
    static final class Push extends ClientExchange<Long> {
        private final long handle;
        private final Parts parts;

        Push(long handle, OutgoingImage image) {
            this.handle = handle;
            this.parts = Parts.of(image);
        }

        @Override
        io.netty.buffer.ByteBuf request() {
            return Frames.header(Frames.PUT, handle, parts.bytes());
        }

        @Override
        Parts body() {
            return parts;
        }

        @Override
        boolean answerHasBody() {
            return false;
        }

        @Override
        Long finish() {
            return parts.bytes();
        }
    }

    /** Fetches an offered image into target shares, verified. */
    static final class Fetch extends ClientExchange<ReceivedImage> {
        private final long handle;
        private final RecordImage.Reader reader;
        private long bytes;

        Fetch(long handle, RecordImage.Reader reader) {
            this.handle = handle;
            this.reader = reader;
        }

        @Override
        io.netty.buffer.ByteBuf request() {
            return Frames.header(Frames.GET, handle, 0);
        }

        @Override
        boolean answerHasBody() {
            return true;
        }

        @Override
        void take(MemorySegment segment) throws RecordFormatException {
            reader.accept(segment);
            bytes += segment.byteSize();
        }

        @Override
        ReceivedImage finish() throws RecordFormatException {
            return new ReceivedImage(reader.finish(), reader.headerBlock(), reader.footerBlock(), bytes);
        }
    }

    /** Raw bytes out of off-heap memory, copied by the peer into off-heap memory of its own. */
    static final class RawPush extends ClientExchange<Long> {
        private final Parts parts;

        RawPush(MemorySegment source, long bytes) {
            this.parts = Parts.repeating(source, bytes);
        }

        @Override
        io.netty.buffer.ByteBuf request() {
            return Frames.header(Frames.RAW_PUT, 0, parts.bytes());
        }

        @Override
        Parts body() {
            return parts;
        }

        @Override
        boolean answerHasBody() {
            return false;
        }

        @Override
        Long finish() {
            return parts.bytes();
        }
    }

    /** Raw bytes from the peer's off-heap memory, copied into off-heap memory here. */
    static final class RawFetch extends ClientExchange<Long> {
        private final int chunkBytes;
        private final long bytes;
        private MemorySegment scratch;
        private long at;
        private long received;

        RawFetch(long bytes, int chunkBytes) {
            this.bytes = bytes;
            this.chunkBytes = chunkBytes;
        }

        @Override
        io.netty.buffer.ByteBuf request() {
            return Frames.header(Frames.RAW_GET, chunkBytes, bytes);
        }

        @Override
        boolean answerHasBody() {
            return true;
        }

        @Override
        void take(MemorySegment segment) {
            if (scratch == null) {
                scratch = Arena.ofAuto().allocate(chunkBytes, 4096);
            }
            for (long from = 0; from < segment.byteSize(); ) {
                long n = Math.min(segment.byteSize() - from, scratch.byteSize() - at);
                MemorySegment.copy(segment, from, scratch, at, n);
                from += n;
                at = (at + n) % scratch.byteSize();
            }
            received += segment.byteSize();
        }

        @Override
        Long finish() {
            return received;
        }
    }
}
