package dev.selene.transport.pool;

import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.timeout.IdleStateEvent;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The serving side of one data connection: asks the store where a pushed record lands and lands it there, asks the
 * store for a requested record and sends it from where it lives, and runs the raw baselines. One exchange at a
 * time; confined to the connection's event loop (the store answers from its own thread, and the answer is handed
 * back to the event loop).
 */
final class ServerHandler extends ChannelInboundHandlerAdapter {

    private static final int HEAD = 0;
    private static final int NAME = 1;
    private static final int WAITING = 2;
    private static final int IMAGE = 3;
    private static final int RAW = 4;

    private final NettyDataPlane plane;
    private final RecordService store;
    private final Frames.Head head = new Frames.Head();
    private final Frames.Block name = new Frames.Block();
    private int state = HEAD;
    private int requestCode;
    /** A pushed image being received, or null. */
    private Inbound inbound;
    private long remaining;
    private MemorySegment scratch;
    private long scratchAt;
    /** An image or raw bytes being sent, or null. */
    private PartWriter writer;
    private ChannelHandlerContext ctx;

    /** A pushed image being landed: its reader and who is told how it ended. */
    private record Inbound(RecordKey key, long imageBytes, RecordImage.Reader reader,
                           BiConsumer<ReceivedImage, Throwable> ended) {
    }

    ServerHandler(NettyDataPlane plane, RecordService store) {
        this.plane = plane;
        this.store = store;
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
                switch (state) {
                    case HEAD -> {
                        if (head.read(in)) {
                            onRequest();
                        }
                    }
                    case NAME -> {
                        if (name.read(in)) {
                            onNamed();
                        }
                    }
                    case IMAGE -> takeImageBytes(in);
                    case RAW -> takeRawBytes(in);
                    default -> throw new TransferFailedException("the peer sent bytes before it was answered");
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
        requestCode = head.code;
        switch (head.code) {
            case Frames.PUT, Frames.GET -> {
                name.start(head.length);
                state = NAME;
                if (head.length == 0) {
                    throw new TransferFailedException("a request without a record name");
                }
            }
            case Frames.RAW_PUT -> {
                remaining = head.length;
                state = RAW;
                if (remaining == 0) {
                    answered(Frames.header(Frames.OK, 0, 0));
                }
            }
            case Frames.RAW_GET -> onRawGet(head.param, head.length);
            default -> throw new TransferFailedException("unknown request code " + head.code);
        }
    }

    /** The record name arrived: ask the store, and read nothing more until it answers. */
    private void onNamed() {
        state = WAITING;
        ctx.channel().config().setAutoRead(false);
        EventLoop loop = ctx.channel().eventLoop();
        ByteBuf b = name.buffer();
        if (requestCode == Frames.PUT) {
            RecordWire.Named named = RecordWire.readSpec(b);
            store.offered(named.spec(), named.imageBytes(), new Admission(loop, named));
        } else {
            RecordKey key = RecordWire.readKey(b);
            store.requested(key, new Delivery(loop, key));
        }
    }

    /** A store's answer, run on the connection's event loop; the first answer counts, later ones are ignored. */
    private static class Answer {
        private final EventLoop loop;
        private final AtomicBoolean answered = new AtomicBoolean();

        Answer(EventLoop loop) {
            this.loop = loop;
        }

        final void once(Runnable action) {
            if (answered.compareAndSet(false, true)) {
                loop.execute(action);
            }
        }
    }

    /** The store's answer to a push. */
    private final class Admission extends Answer implements RecordService.Admission {
        private final RecordWire.Named named;

        Admission(EventLoop loop, RecordWire.Named named) {
            super(loop);
            this.named = named;
        }

        @Override
        public void land(Layout layout, PieceShares target, BiConsumer<ReceivedImage, Throwable> ended) {
            once(() -> {
                if (!ctx.channel().isActive()) {
                    ended.accept(null, new TransferFailedException("the connection closed before the image came"));
                    return;
                }
                RecordKey key = named.spec().key();
                inbound = new Inbound(key, named.imageBytes(), new RecordImage.Reader(layout, key, target), ended);
                remaining = named.imageBytes();
                state = IMAGE;
                ctx.writeAndFlush(Frames.header(Frames.READY, 0, 0));
                ctx.channel().config().setAutoRead(true);
            });
        }

        @Override
        public void alreadyHeld() {
            once(() -> answered(Frames.header(Frames.HELD, 0, 0)));
        }

        @Override
        public void refuse(String reason) {
            once(() -> answered(Frames.failure(Frames.REFUSED, reason)));
        }
    }

    /** The store's answer to a request. */
    private final class Delivery extends Answer implements RecordService.Delivery {
        private final RecordKey key;

        Delivery(EventLoop loop, RecordKey key) {
            super(loop);
            this.key = key;
        }

        @Override
        public void send(OutgoingImage image, BiConsumer<Long, Throwable> ended) {
            once(() -> {
                if (!ctx.channel().isActive()) {
                    ended.accept(null, new TransferFailedException("the connection closed before " + key
                            + " could be sent"));
                    return;
                }
                Parts parts = Parts.of(image);
                ctx.write(Frames.header(Frames.OK, 0, parts.bytes()));
                state = HEAD;
                ctx.channel().config().setAutoRead(true);
                writer = new PartWriter(ctx.channel(), parts, failure -> {
                    if (failure == null) {
                        plane.sent(parts.bytes());
                    }
                    ended.accept(failure == null ? parts.bytes() : null, failure == null ? null
                            : new TransferFailedException("sending " + key + " failed: " + failure.getMessage()));
                });
                writer.pump();
            });
        }

        @Override
        public void notHeld(String reason) {
            once(() -> answered(Frames.failure(Frames.NOT_HELD, reason)));
        }
    }

    /** Sends a one-frame answer and takes the next request. */
    private void answered(ByteBuf answer) {
        state = HEAD;
        if (ctx.channel().isActive()) {
            ctx.writeAndFlush(answer);
            ctx.channel().config().setAutoRead(true);
        } else {
            answer.release();
        }
    }

    private void takeImageBytes(ByteBuf in) {
        int n = (int) Math.min(in.readableBytes(), remaining);
        try {
            NettyDataPlane.forEachSegment(in, n, inbound.reader()::accept);
        } catch (RecordFormatException | RuntimeException e) {
            fail("the image of " + inbound.key() + " is invalid: " + e.getMessage(), true);
            return;
        }
        remaining -= n;
        if (remaining == 0) {
            Inbound done = inbound;
            inbound = null;
            state = HEAD;
            try {
                ReceivedImage image = new ReceivedImage(done.reader().finish(), done.reader().headerBlock(),
                        done.reader().footerBlock(), done.imageBytes());
                done.ended().accept(image, null); // the store hears of it before the sender does
                ctx.writeAndFlush(Frames.header(Frames.OK, 0, 0));
            } catch (RecordFormatException | RuntimeException e) {
                String reason = "the image of " + done.key() + " is invalid: " + e.getMessage();
                plane.failed();
                ctx.writeAndFlush(Frames.failure(Frames.INVALID, reason));
                done.ended().accept(null, new TransferFailedException(reason));
            }
        }
    }

    private void takeRawBytes(ByteBuf in) {
        if (scratch == null) {
            scratch = plane.rawTarget();
        }
        int n = (int) Math.min(in.readableBytes(), remaining);
        forEachRawSegment(in, n, segment -> {
            for (long at = 0; at < segment.byteSize(); ) {
                long take = Math.min(segment.byteSize() - at, scratch.byteSize() - scratchAt);
                MemorySegment.copy(segment, at, scratch, scratchAt, take);
                at += take;
                scratchAt = (scratchAt + take) % scratch.byteSize();
            }
        });
        remaining -= n;
        if (remaining == 0) {
            answered(Frames.header(Frames.OK, 0, 0));
        }
    }

    private static void forEachRawSegment(ByteBuf in, int n, Consumer<MemorySegment> consumer) {
        try {
            NettyDataPlane.forEachSegment(in, n, consumer::accept);
        } catch (RecordFormatException e) {
            throw new IllegalStateException(e); // raw bytes are not checked
        }
    }

    private void onRawGet(long chunkBytes, long bytes) {
        if (chunkBytes < 1 || chunkBytes > NettyDataPlane.RAW_RING_BYTES || bytes < 0) {
            throw new TransferFailedException("a raw read of " + bytes + " bytes in chunks of " + chunkBytes);
        }
        Parts parts = Parts.ring(plane.rawSource(), bytes, (int) chunkBytes);
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

    /** Whether bytes are owed in either direction (waiting for the store is not: the peer is waiting too). */
    private boolean busy() {
        return state == NAME || state == IMAGE || state == RAW || (writer != null && !writer.done());
    }

    /**
     * Fails whatever is in progress on this connection. When {@code close}, the connection is closed first, so its
     * pending writes have failed (and no longer read their memory) before anyone is told.
     */
    private void fail(String reason, boolean close) {
        if (busy()) {
            plane.failed();
        }
        Inbound lost = inbound;
        inbound = null;
        String why = lost == null ? reason : reason + " (" + (lost.imageBytes() - remaining) + " of "
                + lost.imageBytes() + " bytes of " + lost.key() + " had arrived)";
        state = HEAD;
        if (close && ctx.channel().isActive()) {
            if (lost != null) {
                ctx.writeAndFlush(Frames.failure(Frames.INVALID, why));
            }
            ctx.channel().close();
        }
        if (lost != null) {
            lost.ended().accept(null, new TransferFailedException(why));
        }
        if (writer != null) {
            writer.fail(new TransferFailedException(reason));
            writer = null;
        }
    }
}
