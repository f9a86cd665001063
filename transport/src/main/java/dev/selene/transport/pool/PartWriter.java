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

    /** Writes what the channel takes now. */
    void pump() {
        boolean wrote = false;
        while (!done && next < parts.count() && channel.isWritable()) {
            boolean last = next == parts.count() - 1;
            var part = parts.part(next++);
            channel.write(Unpooled.wrappedBuffer(part.asByteBuffer())).addListener((ChannelFutureListener) f -> {
                if (!f.isSuccess()) {
                    end(f.cause() != null ? f.cause() : new TransferFailedException("a write was cancelled"));
                } else if (last) {
                    end(null);
                }
            });
            wrote = true;
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
