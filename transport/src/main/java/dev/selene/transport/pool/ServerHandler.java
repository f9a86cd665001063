package dev.selene.transport.pool;

import dev.selene.engine.codec.RecordFormatException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The serving side of one data connection: takes pushed images into the slots their handle names, serves offered
 * images from their slots, and the raw baselines. One request at a time; confined to the connection's event loop.
 */
final class ServerHandler extends ChannelInboundHandlerAdapter {

    private final NettyDataPlane plane;
    private final Frames.Head head = new Frames.Head();
    /** A pushed image being received, or null. */
    private NettyDataPlane.Inbound inbound;
    private long inboundRemaining;
    /** Raw bytes still to receive (a raw push), or 0. */
    private long rawRemaining;
    /** Bytes of a refused push still to read and drop, or 0. */
    private long discarding;
    private MemorySegment scratch;
    private long scratchAt;
    /** An image or raw bytes being served, or null. */
    private PartWriter writer;
    private ChannelHandlerContext ctx;

    ServerHandler(NettyDataPlane plane) {
        this.plane = plane;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        plane.opened(ctx.channel());
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
            plane.received(in.readableBytes());
            while (in.isReadable() && ctx.channel().isOpen()) {
                if (inbound != null) {
                    takeImageBytes(in);
                } else if (rawRemaining > 0) {
                    takeRawBytes(in);
                } else if (discarding > 0) {
                    int n = (int) Math.min(in.readableBytes(), discarding);
                    in.skipBytes(n);
                    discarding -= n;
                } else if (head.read(in)) {
                    onRequest();
                }
            }
        } catch (TransferFailedException e) {
            fail(e.getMessage(), true);
        } finally {
            in.release();
        }
    }

    private void onRequest() {
        if (writer != null && !writer.done()) {
            throw new TransferFailedException("a request arrived while the last one was still being answered");
        }
        switch (head.code) {
            case Frames.PUT -> onPut(head.handle, head.length);
            case Frames.GET -> onGet(head.handle);
            case Frames.RAW_PUT -> {
                rawRemaining = head.length;
                if (rawRemaining == 0) {
                    ctx.writeAndFlush(Frames.header(Frames.OK, 0, 0));
                }
            }
            case Frames.RAW_GET -> onRawGet(head.handle, head.length);
            default -> throw new TransferFailedException("unknown request code " + head.code);
        }
    }

    private void onPut(long handle, long length) {
        NettyDataPlane.Inbound claimed = plane.claimExpected(handle);
        if (claimed == null) {
            // Answer at once; the image's bytes that follow are read and dropped, so the sender learns why.
            ctx.writeAndFlush(Frames.failure(Frames.UNKNOWN, handle, "no image is expected under handle " + handle
                    + " (it was withdrawn after a deadline, or never handed out)"));
            discarding = length;
            return;
        }
        inbound = claimed;
        inboundRemaining = length;
        if (length != claimed.imageBytes()) {
            fail("the peer pushed " + length + " bytes where the image of " + claimed.key() + " has "
                    + claimed.imageBytes(), true);
        }
    }

    private void takeImageBytes(ByteBuf in) {
        int n = (int) Math.min(in.readableBytes(), inboundRemaining);
        try {
            NettyDataPlane.forEachSegment(in, n, inbound.reader()::accept);
        } catch (RecordFormatException | RuntimeException e) {
            fail("the image of " + inbound.key() + " is invalid: " + e.getMessage(), true);
            return;
        }
        inboundRemaining -= n;
        if (inboundRemaining == 0) {
            NettyDataPlane.Inbound done = inbound;
            inbound = null;
            try {
                ReceivedImage image = done.finish();
                ctx.writeAndFlush(Frames.header(Frames.OK, done.handle(), 0));
                done.end(image, null);
            } catch (RecordFormatException | RuntimeException e) {
                String reason = "the image of " + done.key() + " is invalid: " + e.getMessage();
                ctx.writeAndFlush(Frames.failure(Frames.INVALID, done.handle(), reason));
                done.end(null, new TransferFailedException(reason));
            }
        }
    }

    private void takeRawBytes(ByteBuf in) {
        if (scratch == null) {
            scratch = Arena.ofAuto().allocate(NettyDataPlane.RAW_SCRATCH_BYTES, 4096);
        }
        int n = (int) Math.min(in.readableBytes(), rawRemaining);
        forEachRawSegment(in, n, segment -> {
            for (long at = 0; at < segment.byteSize(); ) {
                long take = Math.min(segment.byteSize() - at, scratch.byteSize() - scratchAt);
                MemorySegment.copy(segment, at, scratch, scratchAt, take);
                at += take;
                scratchAt = (scratchAt + take) % scratch.byteSize();
            }
        });
        rawRemaining -= n;
        if (rawRemaining == 0) {
            ctx.writeAndFlush(Frames.header(Frames.OK, 0, 0));
        }
    }

    private static void forEachRawSegment(ByteBuf in, int n, java.util.function.Consumer<MemorySegment> consumer) {
        try {
            NettyDataPlane.forEachSegment(in, n, consumer::accept);
        } catch (RecordFormatException e) {
            throw new IllegalStateException(e); // raw bytes are not checked
        }
    }

    private void onGet(long handle) {
        NettyDataPlane.Outbound offered = plane.claimOffered(handle);
        if (offered == null) {
            ctx.writeAndFlush(Frames.failure(Frames.UNKNOWN, handle, "no image is offered under handle " + handle
                    + " (it was withdrawn after a deadline, or never handed out)"));
            return;
        }
        Parts parts = Parts.of(offered.image());
        ctx.write(Frames.header(Frames.OK, handle, parts.bytes()));
        writer = new PartWriter(ctx.channel(), parts, failure -> {
            if (failure == null) {
                plane.sent(parts.bytes());
            }
            offered.end(failure == null ? parts.bytes() : null, failure == null ? null
                    : new TransferFailedException("serving the image failed: " + failure.getMessage()));
        });
        writer.pump();
    }

    private void onRawGet(long chunkBytes, long bytes) {
        if (chunkBytes < 1 || chunkBytes > NettyDataPlane.RAW_SCRATCH_BYTES || bytes < 0) {
            throw new TransferFailedException("a raw read of " + bytes + " bytes in chunks of " + chunkBytes);
        }
        Parts parts = Parts.repeating(plane.rawSource((int) chunkBytes), bytes);
        ctx.write(Frames.header(Frames.OK, 0, bytes));
        writer = new PartWriter(ctx.channel(), parts, failure -> {
            if (failure == null) {
                plane.sent(bytes);
            }
        });
        writer.pump();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (writer != null && ctx.channel().isWritable()) {
            writer.pump();
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent && busy()) {
            fail("the connection carried no bytes for " + plane.silence().toMillis() + " ms mid-transfer", true);
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        fail("the connection closed mid-transfer", false);
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail("the connection failed: " + cause.getMessage(), true);
    }

    private boolean busy() {
        return inbound != null || rawRemaining > 0 || discarding > 0 || (writer != null && !writer.done());
    }

    /**
     * Fails whatever is in progress on this connection. When {@code close}, the connection is closed first, so its
     * pending writes have failed (and no longer read their memory) before anyone is told.
     */
    private void fail(String reason, boolean close) {
        if (busy()) {
            plane.failed();
        }
        NettyDataPlane.Inbound lost = inbound;
        inbound = null;
        rawRemaining = 0;
        discarding = 0;
        String why = lost == null ? reason : reason + " (" + (lost.imageBytes() - inboundRemaining) + " of "
                + lost.imageBytes() + " bytes of " + lost.key() + " had arrived)";
        if (close && ctx.channel().isActive()) {
            if (lost != null) {
                ctx.writeAndFlush(Frames.failure(Frames.INVALID, lost.handle(), why));
            }
            ctx.channel().close();
        }
        if (lost != null) {
            lost.end(null, new TransferFailedException(why));
        }
        if (writer != null) {
            writer.fail(new TransferFailedException(reason));
            writer = null;
        }
    }
}
