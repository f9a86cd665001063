package dev.selene.transport.pool;

import dev.selene.engine.codec.RecordFormatException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;

/**
 * The asking side of one data connection: runs one {@link ClientExchange} at a time, then hands the connection back
 * to its pool (or closes it when the exchange failed mid-stream). Confined to the connection's event loop.
 */
final class ClientHandler extends ChannelInboundHandlerAdapter {

    private static final int HEAD = 0;
    private static final int REASON = 1;
    private static final int BODY = 2;

    private final NettyDataPlane plane;
    private final DataAddress peer;
    private final Frames.Head head = new Frames.Head();
    private final Frames.Block reason = new Frames.Block();
    private ChannelHandlerContext ctx;
    private ClientExchange<?> current;
    private PartWriter writer;
    private boolean bodySent;
    private boolean answered;
    private int phase = HEAD;
    private long remaining;

    ClientHandler(NettyDataPlane plane, DataAddress peer) {
        this.plane = plane;
        this.peer = peer;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        plane.opened(ctx.channel());
        super.channelActive(ctx);
    }

    /** Starts {@code exchange} on this connection (which is idle). */
    void begin(ClientExchange<?> exchange) {
        if (exchange.aborted() != null) {
            plane.release(peer, ctx.channel());
            exchange.done.completeExceptionally(new TransferFailedException(exchange.aborted()));
            return;
        }
        if (!ctx.channel().isActive()) {
            exchange.done.completeExceptionally(new TransferFailedException("the connection to " + peer
                    + " closed before the transfer began"));
            return;
        }
        current = exchange;
        phase = HEAD;
        answered = false;
        Parts body = exchange.body();
        bodySent = body == null;
        ctx.write(exchange.request());
        if (body == null || exchange.bodyAfterReady()) {
            ctx.flush();
            return;
        }
        sendBody(exchange, body);
    }

    private void sendBody(ClientExchange<?> exchange, Parts body) {
        writer = new PartWriter(ctx.channel(), body, failure -> onBodyWritten(exchange, body, failure));
        writer.pump();
    }

    private void onBodyWritten(ClientExchange<?> exchange, Parts body, Throwable failure) {
        if (exchange != current) {
            return;
        }
        if (failure != null) {
            fail(exchange, "sending to " + peer + " failed: " + failure.getMessage(), true);
            return;
        }
        plane.sent(body.bytes());
        bodySent = true;
        if (answered) {
            succeed();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
            plane.received(in.readableBytes());
            while (in.isReadable() && ctx.channel().isOpen()) {
                if (current == null) {
                    ctx.channel().close(); // bytes nobody asked for: the peer is out of step
                    return;
                }
                switch (phase) {
                    case HEAD -> {
                        if (head.read(in)) {
                            onHead();
                        }
                    }
                    case REASON -> {
                        if (reason.read(in)) {
                            refused(reason.text(), head.code == Frames.NOT_HELD);
                        }
                    }
                    default -> takeBody(in);
                }
            }
        } catch (TransferFailedException e) {
            if (current != null) {
                fail(current, e.getMessage(), true);
            } else {
                ctx.channel().close();
            }
        } finally {
            in.release();
        }
    }

    @SuppressWarnings("unchecked")
    private void onHead() {
        if (head.code == Frames.READY && current.bodyAfterReady() && writer == null && !bodySent) {
            sendBody(current, current.body());
            return;
        }
        if (head.code == Frames.HELD && current.bodyAfterReady() && writer == null) {
            ClientExchange<Object> exchange = (ClientExchange<Object>) current;
            current = null;
            plane.release(peer, ctx.channel());
            exchange.done.complete(exchange.held());
            return;
        }
        if (head.code == Frames.OK) {
            if (current.answerHasBody() && head.length > 0) {
                remaining = head.length;
                phase = BODY;
            } else {
                answered();
            }
            return;
        }
        reason.start(head.length);
        phase = REASON;
        if (head.length == 0) {
            refused("", head.code == Frames.NOT_HELD);
        }
    }

    private void takeBody(ByteBuf in) {
        ClientExchange<?> exchange = current;
        int n = (int) Math.min(in.readableBytes(), remaining);
        try {
            NettyDataPlane.forEachSegment(in, n, exchange::take);
        } catch (RecordFormatException | RuntimeException e) {
            fail(exchange, "the image from " + peer + " is invalid: " + e.getMessage(), true);
            return;
        }
        remaining -= n;
        if (remaining == 0) {
            answered();
        }
    }

    private void answered() {
        phase = HEAD;
        answered = true;
        if (bodySent) {
            succeed();
        }
    }

    private void refused(String text, boolean notHeld) {
        phase = HEAD;
        // A refusal while the image is still being sent (the peer found it invalid part way) leaves bytes in flight:
        // the connection is closed. Any other refusal leaves it in step, to be reused.
        boolean inStep = writer == null || writer.done();
        fail(current, new TransferFailedException(peer + " refused: " + text, notHeld), !inStep);
    }

    @SuppressWarnings("unchecked")
    private void succeed() {
        ClientExchange<Object> exchange = (ClientExchange<Object>) current;
        Object value;
        try {
            value = exchange.finish();
        } catch (RecordFormatException | RuntimeException e) {
            fail(exchange, "the image from " + peer + " is invalid: " + e.getMessage(), true);
            return;
        }
        current = null;
        writer = null;
        plane.release(peer, ctx.channel());
        exchange.done.complete(value);
    }

    /** Ends {@code exchange} early (it may be waiting for its turn, or over already). */
    void abort(ClientExchange<?> exchange, String why) {
        if (exchange == current) {
            fail(exchange, "aborted: " + why, true);
        }
    }

    /**
     * Fails the exchange in progress. When {@code close}, the connection is closed first, so its pending writes have
     * failed (and no longer read their memory) before the exchange completes.
     */
    private void fail(ClientExchange<?> exchange, String why, boolean close) {
        fail(exchange, new TransferFailedException(why), close);
    }

    private void fail(ClientExchange<?> exchange, TransferFailedException failure, boolean close) {
        if (exchange != current || exchange == null) {
            return;
        }
        current = null;
        phase = HEAD;
        PartWriter w = writer;
        writer = null;
        plane.failed();
        if (close) {
            ctx.channel().close().addListener((ChannelFutureListener) f -> exchange.done.completeExceptionally(failure));
        } else {
            plane.release(peer, ctx.channel());
            exchange.done.completeExceptionally(failure);
        }
        if (w != null) {
            w.fail(failure);
        }
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
        if (evt instanceof IdleStateEvent && current != null) {
            fail(current, peer + " sent and took no bytes for " + plane.silence().toMillis() + " ms mid-transfer",
                    true);
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (current != null) {
            fail(current, "the connection to " + peer + " closed mid-transfer", false);
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (current != null) {
            fail(current, "the connection to " + peer + " failed: " + cause.getMessage(), true);
        } else {
            ctx.channel().close();
        }
    }
}
