package dev.selene.transport.pool;

import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import io.netty.channel.Channel;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;

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
        if (done.isDone()) {
            return;
        }
        aborted = reason;
        Channel c = channel;
        if (c != null) {
            try {
                c.eventLoop().execute(() -> {
                    ClientHandler h = c.pipeline().get(ClientHandler.class);
                    if (h != null) {
                        h.abort(this, reason);
                    }
                });
            } catch (RejectedExecutionException e) {
                // The data plane has closed: its connections, this one's too, are closed and their exchanges failed.
            }
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

    /** What follows the request (a push's image), or null. */
    Parts body() {
        return null;
    }

    /** Whether the body waits for the peer's READY (a record push) or follows the request at once (raw). */
    boolean bodyAfterReady() {
        return false;
    }

    /** The value when the peer answers that it holds the record already. */
    T held() {
        throw new TransferFailedException("the peer answered HELD to a request that is not a push");
    }

    /** Whether an OK answer carries bytes. */
    abstract boolean answerHasBody();

    /** Takes answer body bytes. */
    void take(MemorySegment bytes) throws RecordFormatException {
        throw new IllegalStateException("no body expected");
    }

    /** The value once the answer arrived whole (and the body, if any, was sent whole). */
    abstract T finish() throws RecordFormatException;

    /** Pushes a record's image to a peer's store, once the store has said where it lands. */
    static final class Push extends ClientExchange<Pushed> {
        private final RecordSpec spec;
        private final Parts parts;

        Push(RecordSpec spec, OutgoingImage image) {
            this.spec = spec;
            this.parts = Parts.of(image);
        }

        @Override
        io.netty.buffer.ByteBuf request() {
            return Frames.request(Frames.PUT, RecordWire.spec(spec, parts.bytes()));
        }

        @Override
        Parts body() {
            return parts;
        }

        @Override
        boolean bodyAfterReady() {
            return true;
        }

        @Override
        boolean answerHasBody() {
            return false;
        }

        @Override
        Pushed held() {
            return new Pushed(true, 0);
        }

        @Override
        Pushed finish() {
            return new Pushed(false, parts.bytes());
        }
    }

    /** Fetches a record's image from a peer's store into target shares, verified. */
    static final class Fetch extends ClientExchange<ReceivedImage> {
        private final RecordKey key;
        private final RecordImage.Reader reader;
        private long bytes;

        Fetch(RecordKey key, RecordImage.Reader reader) {
            this.key = key;
            this.reader = reader;
        }

        @Override
        io.netty.buffer.ByteBuf request() {
            return Frames.request(Frames.GET, RecordWire.key(key));
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

        RawPush(Parts parts) {
            this.parts = parts;
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
        private final MemorySegment ring;
        private long at;
        private long received;

        RawFetch(long bytes, int chunkBytes, MemorySegment ring) {
            this.bytes = bytes;
            this.chunkBytes = chunkBytes;
            this.ring = ring;
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
            for (long from = 0; from < segment.byteSize(); ) {
                long n = Math.min(segment.byteSize() - from, ring.byteSize() - at);
                MemorySegment.copy(segment, from, ring, at, n);
                from += n;
                at = (at + n) % ring.byteSize();
            }
            received += segment.byteSize();
        }

        @Override
        Long finish() {
            return received;
        }
    }
}
