package dev.selene.transport.pool;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;

import java.util.function.Consumer;

/**
 * Writes {@link Parts} to a channel as far as its write buffer's high-water mark allows, and on when it drains
 * ({@link #pump()} from the channel's writability change): the flow control that makes a slow receiver slow its
 * sender. Confined to the channel's event loop.
 */
final class PartWriter {

    private final Channel channel;
    private final Parts parts;
    private final Consumer<Throwable> ended;
    private int next;
    private boolean done;

    /** A writer of {@code parts}; {@code ended} runs once, with null when the last part was written. */
    PartWriter(Channel channel, Parts parts, Consumer<Throwable> ended) {
        this.channel = channel;
        this.parts = parts;
        this.ended = ended;
    }

    /**
     * Writes what the channel takes now. Only the last part's write carries a listener: the others' failures reach
     * the pipeline's exception handler (which fails the transfer and closes the channel), and writes complete in
     * order, so the last one's success means every part went out.
     */
    void pump() {
        boolean wrote = false;
        while (!done && next < parts.count() && channel.isWritable()) {
            var buf = Unpooled.wrappedBuffer(parts.part(next++).asByteBuffer());
            wrote = true;
            if (next < parts.count()) {
                channel.write(buf, channel.voidPromise());
                continue;
            }
            channel.write(buf).addListener((ChannelFutureListener) f -> {
                if (!f.isSuccess()) {
                    end(f.cause() != null ? f.cause() : new TransferFailedException("a write was cancelled"));
                } else {
                    end(null);
                }
            });
        }
        if (wrote) {
            channel.flush();
        }
        if (!done && parts.count() == 0) {
            end(null);
        }
    }

    /** Ends the writer with {@code failure} (its channel is being closed). */
    void fail(Throwable failure) {
        end(failure);
    }

    boolean done() {
        return done;
    }

    private void end(Throwable failure) {
        if (!done) {
            done = true;
            ended.accept(failure);
        }
    }
}
