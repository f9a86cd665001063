package dev.selene.actors.pool;

import dev.selene.transport.tls.PoolTls;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.remote.artery.tcp.SSLEngineProvider;
import scala.Option;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSession;

/**
 * The cluster's TLS for Pekko Artery ({@code tls-tcp}): the node's PEM files from {@code selene.pool.tls}, TLS 1.3,
 * mutual authentication against the pool's CA (the server's engine requires the peer's certificate), the files
 * re-read when they change (new connections use the new ones). A peer that presents no certificate, one another CA signed, an expired one, or plain text is refused: counted (the
 * {@code cluster} plane of {@code selene_pool_tls_refused_total}) and logged once per reason and peer.
 *
 * <p>Why not Pekko's {@code RotatingKeysSSLEngineProvider}: it also rotates PEM files without a restart, but it
 * requires every peer to share a subject name with this node's certificate and tells no one why it refused a peer;
 * this provider checks the pool's CA alone (the CA signs only the pool's nodes) and counts and logs each refusal.
 */
public final class PoolSslEngineProvider implements SSLEngineProvider {

    private final PoolTls tls;

    /** Made by Pekko's remoting, with the node's actor system. */
    public PoolSslEngineProvider(ActorSystem system) {
        PoolSecurity s = PoolSecurity.from(system.settings().config());
        if (!s.tls()) {
            throw new IllegalStateException("pekko.remote.artery.transport = tls-tcp, but selene.pool.tls is not set");
        }
        this.tls = s.poolTls();
    }

    @Override
    public SSLEngine createServerSSLEngine(String hostname, int port) {
        return tls.clusterEngine(true, hostname, port);
    }

    @Override
    public SSLEngine createClientSSLEngine(String hostname, int port) {
        return tls.clusterEngine(false, hostname, port);
    }

    @Override
    public Option<Throwable> verifyClientSession(String hostname, SSLSession session) {
        // The engine required the peer's certificate and checked it against the pool's CA.
        return Option.empty();
    }

    @Override
    public Option<Throwable> verifyServerSession(String hostname, SSLSession session) {
        return Option.empty();
    }
}
