package dev.selene.transport.pool;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * The data plane on Netty: native epoll where it loads, Java NIO otherwise. Images are written to the socket
 * straight from the memory their shares live in (wrapped, never copied in Java) and read from the socket straight
 * into the target shares, checked as they land. Each side's write buffer stops at a high-water mark and the reader
 * reads only as fast as it lands bytes, so TCP's own window carries a slow receiver's pace back to its senders.
 * Connections to a peer are kept and reused; one carries one transfer at a time.
 */
public final class NettyDataPlane implements DataPlane {

    /** Which Netty transport carries the bytes. */
    public enum Backend {
        /** Linux's epoll through Netty's native library. */
        EPOLL,
        /** Java NIO, everywhere. */
        NIO;

        /** Epoll where its native library loads, NIO otherwise. */
        public static Backend best() {
            return Epoll.isAvailable() ? EPOLL : NIO;
        }
    }

    /** A connection that carries no bytes for this long mid-transfer fails that transfer. */
    public static final Duration DEFAULT_SILENCE = Duration.ofSeconds(10);
    /** Off-heap bytes a raw baseline copies received bytes into (cyclically), and the largest raw chunk. */
    static final int RAW_SCRATCH_BYTES = 4 << 20;
    /** Bytes queued on a connection past which a sender waits for it to drain. */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(1 << 20, 4 << 20);
    /** Idle connections kept per peer. */
    static final int IDLE_CONNECTIONS_KEPT = 16;

    /** An expected image, registered under a handle until a peer pushes it. */
    private record Expected(Layout layout, RecordKey key, long imageBytes, PieceShares target,
                            BiConsumer<ReceivedImage, Throwable> ended) {
    }

    /** A pushed image being received: the registration and the reader landing it. */
    record Inbound(long handle, RecordKey key, long imageBytes, RecordImage.Reader reader,
                   BiConsumer<ReceivedImage, Throwable> ended) {

        ReceivedImage finish() throws RecordFormatException {
            return new ReceivedImage(reader.finish(), reader.headerBlock(), reader.footerBlock(), imageBytes);
        }

        void end(ReceivedImage image, Throwable failure) {
            ended.accept(image, failure);
        }
    }

    /** An offered image, registered under a handle until a peer fetches it. */
    record Outbound(long handle, OutgoingImage image, BiConsumer<Long, Throwable> ended) {

        void end(Long bytes, Throwable failure) {
            ended.accept(bytes, failure);
        }
    }

    private final Backend backend;
    private final Duration silence;
    private final EventLoopGroup group;
    private final Bootstrap client;
    private final Channel server;
    private final DataAddress address;
    private final AtomicLong handles = new AtomicLong(ThreadLocalRandom.current().nextLong(1L << 40) + 1);
    private final Map<Long, Expected> expected = new ConcurrentHashMap<>();
    private final Map<Long, Outbound> offered = new ConcurrentHashMap<>();
    private final Map<DataAddress, ConcurrentLinkedDeque<Channel>> idle = new ConcurrentHashMap<>();
    private final Set<Channel> open = ConcurrentHashMap.newKeySet();
    private final Map<Integer, MemorySegment> rawSources = new ConcurrentHashMap<>();
    private final AtomicLong bytesSent = new AtomicLong();
    private final AtomicLong bytesReceived = new AtomicLong();
    private final AtomicLong transfersFailed = new AtomicLong();
    private volatile boolean closed;

    private NettyDataPlane(Backend backend, Duration silence, int threads, String bindHost, int port,
                           String advertisedHost) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.silence = Objects.requireNonNull(silence, "silence");
        if (silence.isNegative() || silence.isZero()) {
            throw new IllegalArgumentException("silence " + silence + " is invalid; allowed: more than zero");
        }
        IoHandlerFactory io = backend == Backend.EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.group = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("selene-data", true), io);
        this.client = new Bootstrap().group(group)
                .channel(backend == Backend.EPOLL ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, silence.toMillis()));
        if (bindHost == null) {
            this.server = null;
            this.address = null;
            return;
        }
        Class<? extends ServerChannel> serverClass = backend == Backend.EPOLL ? EpollServerSocketChannel.class
                : NioServerSocketChannel.class;
        try {
            this.server = new ServerBootstrap().group(group).channel(serverClass)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.SO_KEEPALIVE, true)
                    .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(idleHandler(), new ServerHandler(NettyDataPlane.this));
                        }
                    })
                    .bind(bindHost, port).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            throw new IllegalStateException("the data plane could not listen on " + bindHost + ":" + port + ": "
                    + e.getMessage(), e);
        }
        int bound = ((InetSocketAddress) server.localAddress()).getPort();
        this.address = new DataAddress(advertisedHost != null ? advertisedHost : bindHost, bound);
    }

    /**
     * A data plane that serves on {@code bindHost:port} (0: any free port), advertised to peers as
     * {@code advertisedHost} (null: the bind host), and sends and fetches too.
     */
    public static NettyDataPlane serve(String bindHost, int port, String advertisedHost, Backend backend,
                                       Duration silence, int threads) {
        Objects.requireNonNull(bindHost, "bindHost");
        return new NettyDataPlane(backend, silence, threads, bindHost, port, advertisedHost);
    }

    /** A data plane that only sends and fetches (a host of the pool). */
    public static NettyDataPlane client(Backend backend, Duration silence, int threads) {
        return new NettyDataPlane(backend, silence, threads, null, 0, null);
    }

    @Override
    public DataAddress address() {
        return address;
    }

    /** How long a connection may stay silent mid-transfer. */
    Duration silence() {
        return silence;
    }

    @Override
    public long expect(Layout layout, RecordKey key, long imageBytes, PieceShares target,
                       BiConsumer<ReceivedImage, Throwable> ended) {
        requireServing();
        long handle = handles.getAndIncrement();
        expected.put(handle, new Expected(layout, key, imageBytes, target, ended));
        return handle;
    }

    @Override
    public long offer(OutgoingImage image, BiConsumer<Long, Throwable> ended) {
        requireServing();
        long handle = handles.getAndIncrement();
        offered.put(handle, new Outbound(handle, image, ended));
        return handle;
    }

    @Override
    public boolean cancel(long handle) {
        return expected.remove(handle) != null || offered.remove(handle) != null;
    }

    /** Takes the registration of an expected image for the transfer that carries it; null when there is none. */
    Inbound claimExpected(long handle) {
        Expected e = expected.remove(handle);
        return e == null ? null : new Inbound(handle, e.key(), e.imageBytes(),
                new RecordImage.Reader(e.layout(), e.key(), e.target()), e.ended());
    }

    /** Takes the registration of an offered image for the transfer that serves it; null when there is none. */
    Outbound claimOffered(long handle) {
        return offered.remove(handle);
    }

    @Override
    public Transfer<Long> push(DataAddress to, long handle, OutgoingImage image) {
        return start(to, new ClientExchange.Push(handle, image));
    }

    @Override
    public Transfer<ReceivedImage> fetch(DataAddress from, long handle, Layout layout, RecordKey key,
                                         PieceShares target) {
        return start(from, new ClientExchange.Fetch(handle, new RecordImage.Reader(layout, key, target)));
    }

    @Override
    public Transfer<Long> rawPush(DataAddress to, long bytes, int chunkBytes) {
        return start(to, new ClientExchange.RawPush(rawSource(chunkBytes), bytes));
    }

    @Override
    public Transfer<Long> rawFetch(DataAddress from, long bytes, int chunkBytes) {
        if (chunkBytes < 1 || chunkBytes > RAW_SCRATCH_BYTES) {
            throw new IllegalArgumentException("raw chunk of " + chunkBytes + " bytes; allowed: 1.."
                    + RAW_SCRATCH_BYTES);
        }
        return start(from, new ClientExchange.RawFetch(bytes, chunkBytes));
    }

    /** Off-heap bytes of a raw chunk, filled once with a pattern. */
    MemorySegment rawSource(int chunkBytes) {
        return rawSources.computeIfAbsent(chunkBytes, n -> {
            MemorySegment s = Arena.ofAuto().allocate(n, 4096);
            for (long i = 0; i < n; i += 8) {
                s.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            return s;
        });
    }

    private <T> Transfer<T> start(DataAddress to, ClientExchange<T> exchange) {
        Objects.requireNonNull(to, "to");
        if (closed) {
            exchange.done.completeExceptionally(new TransferFailedException("the data plane is closed"));
            return exchange;
        }
        ConcurrentLinkedDeque<Channel> kept = idle.get(to);
        Channel c;
        while (kept != null && (c = kept.pollFirst()) != null) {
            if (c.isActive()) {
                begin(c, exchange);
                return exchange;
            }
        }
        client.clone().handler(new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(idleHandler(), new ClientHandler(NettyDataPlane.this, to));
            }
        }).connect(to.host(), to.port()).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess()) {
                begin(f.channel(), exchange);
            } else {
                transfersFailed.incrementAndGet();
                exchange.done.completeExceptionally(new TransferFailedException("could not connect to " + to + ": "
                        + (f.cause() == null ? "cancelled" : f.cause().getMessage())));
            }
        });
        return exchange;
    }

    private void begin(Channel c, ClientExchange<?> exchange) {
        exchange.bind(c);
        c.eventLoop().execute(() -> c.pipeline().get(ClientHandler.class).begin(exchange));
    }

    /** Hands an idle client connection back for the next transfer to {@code peer}. */
    void release(DataAddress peer, Channel c) {
        if (!c.isActive() || closed) {
            c.close();
            return;
        }
        ConcurrentLinkedDeque<Channel> kept = idle.computeIfAbsent(peer, p -> new ConcurrentLinkedDeque<>());
        if (kept.size() >= IDLE_CONNECTIONS_KEPT) {
            c.close();
        } else {
            kept.offerFirst(c);
        }
    }

    private IdleStateHandler idleHandler() {
        return new IdleStateHandler(true, 0, 0, silence.toMillis(), TimeUnit.MILLISECONDS);
    }

    void opened(Channel c) {
        open.add(c);
        c.closeFuture().addListener(f -> open.remove(c));
    }

    void sent(long bytes) {
        bytesSent.addAndGet(bytes);
    }

    void received(long bytes) {
        bytesReceived.addAndGet(bytes);
    }

    void failed() {
        transfersFailed.incrementAndGet();
    }

    @Override
    public DataPlaneStats stats() {
        return new DataPlaneStats(backend.name().toLowerCase(java.util.Locale.ROOT), open.size(), bytesSent.get(),
                bytesReceived.get(), transfersFailed.get(), expected.size() + offered.size(), queuedBytes());
    }

    private long queuedBytes() {
        long queued = 0;
        for (Channel c : open) {
            var outbound = c.unsafe().outboundBuffer();
            if (outbound != null) {
                queued += outbound.totalPendingWriteBytes();
            }
        }
        return queued;
    }

    private void requireServing() {
        if (address == null) {
            throw new IllegalStateException("this data plane only sends and fetches; it serves no handles");
        }
        if (closed) {
            throw new IllegalStateException("the data plane is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (server != null) {
            server.close().syncUninterruptibly();
        }
        for (Channel c : List.copyOf(open)) {
            c.close().syncUninterruptibly();
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        TransferFailedException gone = new TransferFailedException("the data plane closed");
        for (Long h : new ArrayList<>(expected.keySet())) {
            Expected e = expected.remove(h);
            if (e != null) {
                e.ended().accept(null, gone);
            }
        }
        for (Long h : new ArrayList<>(offered.keySet())) {
            Outbound o = offered.remove(h);
            if (o != null) {
                o.end(null, gone);
            }
        }
    }

    /** Hands {@code n} readable bytes of {@code in} to {@code consumer} as memory segments, and skips them. */
    static void forEachSegment(ByteBuf in, int n, SegmentConsumer consumer) throws RecordFormatException {
        if (in.nioBufferCount() == 1) {
            consumer.accept(MemorySegment.ofBuffer(in.nioBuffer(in.readerIndex(), n)));
        } else {
            for (ByteBuffer b : in.nioBuffers(in.readerIndex(), n)) {
                consumer.accept(MemorySegment.ofBuffer(b));
            }
        }
        in.skipBytes(n);
    }

    /** Takes bytes as a memory segment. */
    @FunctionalInterface
    interface SegmentConsumer {
        void accept(MemorySegment bytes) throws RecordFormatException;
    }
}
