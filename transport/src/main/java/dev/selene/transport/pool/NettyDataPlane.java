package dev.selene.transport.pool;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
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
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The data plane on Netty: native epoll where it loads, Java NIO otherwise. Images are written to the socket
 * straight from the memory their shares live in (wrapped, never copied in Java) and read from the socket straight
 * into the target shares, checked as they land. Each side's write buffer stops at a high-water mark and the reader
 * reads only as fast as it lands bytes, so TCP's own window carries a slow receiver's pace back to its senders.
 * Connections to a peer are kept and reused; one carries one transfer at a time. See {@link Frames} for the wire.
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
    /**
     * Off-heap bytes a raw baseline sends from and copies into, round and round: larger than a last-level cache, as
     * the slots a record moves between are, so that the baseline does not run from the cache where the records
     * cannot. Also the largest raw chunk.
     */
    static final int RAW_RING_BYTES = 64 << 20;
    /**
     * How much a connection reads at once: it grows from 64 KiB towards 1 MiB while reads fill their buffers, so
     * that a record arrives in a few large reads rather than many small ones.
     */
    static final AdaptiveRecvByteBufAllocator READS = new AdaptiveRecvByteBufAllocator(4096, 64 << 10, 1 << 20);
    /** Bytes queued on a connection past which a sender waits for it to drain. */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(1 << 20, 4 << 20);
    /**
     * Idle connections kept per peer: as many as transfers to one peer run at once in a busy node, so that a burst
     * reuses its connections instead of opening new ones (each new one starts its receive buffers and TCP window
     * small).
     */
    static final int IDLE_CONNECTIONS_KEPT = 64;
    /**
     * The longest a TLS handshake may take in all. It is no deadline for failing over: a client gives up a handshake
     * once its peer has sent nothing for a few times the silence allowed (a stopped or dead peer; see
     * {@link TlsGate}); a loaded peer that keeps answering, one step at a time, gets this long.
     */
    static final Duration HANDSHAKE_LIMIT = Duration.ofSeconds(10);

    private final Backend backend;
    private final Duration silence;
    /** TLS on every connection; null: plain text (one trusted host). */
    private final DataPlaneTls tls;
    private final AtomicLong accessDenied = new AtomicLong();
    private final EventLoopGroup group;
    private final Bootstrap client;
    private final Channel server;
    private final DataAddress address;
    private final Map<DataAddress, ConcurrentLinkedDeque<Channel>> idle = new ConcurrentHashMap<>();
    private final Set<Channel> open = ConcurrentHashMap.newKeySet();
    private volatile MemorySegment rawSource;
    private volatile MemorySegment rawTarget;
    private final AtomicLong bytesSent = new AtomicLong();
    private final AtomicLong bytesReceived = new AtomicLong();
    private final AtomicLong transfersFailed = new AtomicLong();
    private final AtomicLong connectionsOpened = new AtomicLong();
    private volatile boolean closed;

    private NettyDataPlane(Backend backend, Duration silence, int threads, String bindHost, int port,
                           String advertisedHost, RecordService store, DataPlaneTls tls) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.tls = tls;
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
                .option(ChannelOption.RCVBUF_ALLOCATOR, READS)
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
                    .childOption(ChannelOption.RCVBUF_ALLOCATOR, READS)
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(idleHandler());
                            RecordService served = store;
                            if (tls != null) {
                                ch.pipeline().addLast(tlsHandler(tls.tls().serverContext(tls.engine())
                                        .newHandler(ch.alloc())), new TlsGate(tls.tls(), true));
                                served = tls.access().guard(store, () -> ch.attr(TlsGate.PEER).get(),
                                        (op, who) -> accessDenied.incrementAndGet());
                            }
                            ch.pipeline().addLast(new ServerHandler(NettyDataPlane.this, served));
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
     * A data plane that serves {@code store}'s records on {@code bindHost:port} (0: any free port), advertised to
     * peers as {@code advertisedHost} (null: the bind host), and pushes and fetches too.
     */
    public static NettyDataPlane serve(String bindHost, int port, String advertisedHost, Backend backend,
                                       Duration silence, int threads, RecordService store) {
        return serve(bindHost, port, advertisedHost, backend, silence, threads, store, null);
    }

    /**
     * As {@link #serve(String, int, String, Backend, Duration, int, RecordService)}, every connection (served and
     * opened) under {@code tls} (null: plain text, for a pool on one trusted host).
     */
    public static NettyDataPlane serve(String bindHost, int port, String advertisedHost, Backend backend,
                                       Duration silence, int threads, RecordService store, DataPlaneTls tls) {
        Objects.requireNonNull(bindHost, "bindHost");
        Objects.requireNonNull(store, "store");
        return new NettyDataPlane(backend, silence, threads, bindHost, port, advertisedHost, store, tls);
    }

    /** A data plane that only pushes and fetches (a host of the pool), in plain text. */
    public static NettyDataPlane client(Backend backend, Duration silence, int threads) {
        return client(backend, silence, threads, null);
    }

    /** A data plane that only pushes and fetches, every connection under {@code tls} (null: plain text). */
    public static NettyDataPlane client(Backend backend, Duration silence, int threads, DataPlaneTls tls) {
        return new NettyDataPlane(backend, silence, threads, null, 0, null, null, tls);
    }

    /** Whether its connections run TLS. */
    public boolean encrypted() {
        return tls != null;
    }

    /** Requests this serving plane refused because the peer may not touch the record's namespace. */
    public long accessDenied() {
        return accessDenied.get();
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
    public Transfer<Pushed> push(DataAddress to, RecordSpec spec, OutgoingImage image) {
        return start(to, new ClientExchange.Push(spec, image));
    }

    @Override
    public Transfer<ReceivedImage> fetch(DataAddress from, RecordKey key, Layout layout, PieceShares target) {
        return start(from, new ClientExchange.Fetch(key, new RecordImage.Reader(layout, key, target)));
    }

    @Override
    public Transfer<Long> rawPush(DataAddress to, long bytes, int chunkBytes) {
        requireRawChunk(chunkBytes);
        return start(to, new ClientExchange.RawPush(Parts.ring(rawSource(), bytes, chunkBytes)));
    }

    @Override
    public Transfer<Long> rawFetch(DataAddress from, long bytes, int chunkBytes) {
        requireRawChunk(chunkBytes);
        return start(from, new ClientExchange.RawFetch(bytes, chunkBytes, rawTarget()));
    }

    private static void requireRawChunk(int chunkBytes) {
        if (chunkBytes < 1 || chunkBytes > RAW_RING_BYTES) {
            throw new IllegalArgumentException("raw chunk of " + chunkBytes + " bytes; allowed: 1.." + RAW_RING_BYTES);
        }
    }

    /** The ring raw transfers send from, filled once with a pattern. */
    MemorySegment rawSource() {
        MemorySegment s = rawSource;
        if (s == null) {
            synchronized (this) {
                if (rawSource == null) {
                    MemorySegment ring = Arena.ofAuto().allocate(RAW_RING_BYTES, 4096);
                    for (long i = 0; i < RAW_RING_BYTES; i += 8) {
                        ring.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
                    }
                    rawSource = ring;
                }
                s = rawSource;
            }
        }
        return s;
    }

    /** The ring raw transfers copy what they receive into. */
    MemorySegment rawTarget() {
        MemorySegment s = rawTarget;
        if (s == null) {
            synchronized (this) {
                if (rawTarget == null) {
                    rawTarget = Arena.ofAuto().allocate(RAW_RING_BYTES, 4096);
                }
                s = rawTarget;
            }
        }
        return s;
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
                ch.pipeline().addLast(idleHandler());
                if (tls != null) {
                    ch.pipeline().addLast(tlsHandler(tls.tls().clientContext(tls.engine()).newHandler(ch.alloc(),
                            to.host(), to.port())), new TlsGate(tls.tls(), false));
                }
                ch.pipeline().addLast(new ClientHandler(NettyDataPlane.this, to));
            }
        }).connect(to.host(), to.port()).addListener((ChannelFutureListener) f -> {
            SslHandler ssl = f.isSuccess() ? f.channel().pipeline().get(SslHandler.class) : null;
            if (ssl != null) {
                ssl.handshakeFuture().addListener(h -> {
                    if (h.isSuccess()) {
                        begin(f.channel(), exchange);
                    } else {
                        transfersFailed.incrementAndGet();
                        exchange.done.completeExceptionally(new TransferFailedException("the TLS handshake with "
                                + to + " failed: " + (Boolean.TRUE.equals(f.channel().attr(TlsGate.SILENT).get())
                                ? "the peer sent nothing for " + silence.toMillis() * TlsGate.HANDSHAKE_SILENCES + " ms"
                                : TlsGate.describe(h.cause()))));
                    }
                });
            } else if (f.isSuccess()) {
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

    /**
     * A connection's TLS: its handshake bounded in all by {@link #HANDSHAKE_LIMIT} (a client also by its peer's
     * silence, see {@link TlsGate}), and its close not held up waiting to flush the TLS goodbye to a peer that does
     * not read (a plane that closes closes all its connections).
     */
    private SslHandler tlsHandler(SslHandler h) {
        h.setHandshakeTimeoutMillis(Math.max(HANDSHAKE_LIMIT.toMillis(), silence.toMillis()));
        h.setCloseNotifyFlushTimeoutMillis(200);
        return h;
    }

    private IdleStateHandler idleHandler() {
        return new IdleStateHandler(true, 0, 0, silence.toMillis(), TimeUnit.MILLISECONDS);
    }

    void opened(Channel c) {
        connectionsOpened.incrementAndGet();
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
        return new DataPlaneStats(backend.name().toLowerCase(java.util.Locale.ROOT), open.size(),
                connectionsOpened.get(), bytesSent.get(),
                bytesReceived.get(), transfersFailed.get(), queuedBytes());
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
