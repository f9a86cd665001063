package dev.selene.transport.pool;

import dev.selene.transport.tls.PoolTls;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.AttributeKey;

/**
 * Sits right after a data connection's {@link SslHandler}: until the handshake succeeded nothing reaches the
 * transfer handler (a failed handshake closes the connection, counted and logged once as a refusal of the peer;
 * its exceptions stop here). Once it succeeded, the peer's identity is kept on the channel.
 *
 * <p>On a client, a handshake during which the connection carried no byte either way for {@link #HANDSHAKE_SILENCES}
 * times the silence allowed is given up (the connection's idle events): a stopped or dead peer is left within a
 * couple of seconds at the default fail-over deadline, while a loaded peer that answers step by step may take longer
 * in all. The silence of a transfer starts once the handshake has succeeded.
 */
final class TlsGate extends ChannelInboundHandlerAdapter {

    /** The CN of the certificate the peer presented. */
    static final AttributeKey<String> PEER = AttributeKey.valueOf("selene.pool.peer");

    /** Set on a client connection whose handshake was given up because the peer went silent. */
    static final AttributeKey<Boolean> SILENT = AttributeKey.valueOf("selene.pool.silent-handshake");

    /**
     * How many times the silence allowed a handshake's peer may stay silent: a handshake's first answer costs the
     * peer key-exchange work, queued behind every other connection's on a busy manager (a burst opens many at once),
     * where a transfer's next bytes cost nothing but the sending.
     */
    static final int HANDSHAKE_SILENCES = 4;

    private final PoolTls tls;
    private final boolean server;
    private boolean ok;
    /** Idle events in a row before the handshake succeeded. */
    private int silences;

    TlsGate(PoolTls tls, boolean server) {
        this.tls = tls;
        this.server = server;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent idle && !ok) {
            // One event per silence allowed without a byte either way (the first after activity says so).
            silences = idle.isFirst() ? 1 : silences + 1;
            if (!server && silences >= HANDSHAKE_SILENCES) {
                // The peer went silent mid-handshake: closing fails the handshake, and so the transfer waiting on it.
                ctx.channel().attr(SILENT).set(true);
                ctx.close();
            }
            return;
        }
        if (evt instanceof SslHandshakeCompletionEvent e) {
            if (e.isSuccess()) {
                ok = true;
                SslHandler ssl = ctx.pipeline().get(SslHandler.class);
                ctx.channel().attr(PEER).set(PoolTls.peerIdentity(ssl.engine().getSession()));
            } else {
                PoolTls.Reason reason = PoolTls.reasonOf(e.cause());
                // A client counts only what its own trust check refused; the rest is the server refusing it.
                if (reason != null && (server || PoolTls.hasRefusedCertificate(e.cause()))) {
                    tls.refused(PoolTls.Plane.DATA, reason, (server ? "from " : "to ") + peer(ctx),
                            firstLine(e.cause()));
                }
                ctx.close();
            }
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (!ok) {
            // Before a handshake succeeded (or after it failed): its failure event counts it; nothing goes on.
            ctx.close();
            return;
        }
        super.exceptionCaught(ctx, cause);
    }

    /**
     * The peer's address; a connecting peer's without its port (a new one each connection: the log names a peer
     * once).
     */
    private String peer(ChannelHandlerContext ctx) {
        if (ctx.channel().remoteAddress() instanceof java.net.InetSocketAddress a) {
            return server ? a.getHostString() : a.getHostString() + ":" + a.getPort();
        }
        return String.valueOf(ctx.channel().remoteAddress());
    }

    /** A failed handshake in words: the root cause's first line. */
    static String describe(Throwable t) {
        return firstLine(t);
    }

    private static String firstLine(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String m = String.valueOf(root.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
