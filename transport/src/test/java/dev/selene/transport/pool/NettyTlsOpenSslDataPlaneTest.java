package dev.selene.transport.pool;

import dev.selene.transport.tls.PoolTls;
import io.netty.handler.ssl.OpenSslContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The data plane contract with TLS in BoringSSL (netty-tcnative), on Java NIO. */
class NettyTlsOpenSslDataPlaneTest extends TlsDataPlaneContract {

    @BeforeAll
    static void openSslLoads() {
        assumeTrue(PoolTls.openSslAvailable(), "netty-tcnative's BoringSSL does not load here");
    }

    @Override
    PoolTls.Engine engine() {
        return PoolTls.Engine.OPENSSL;
    }

    @Override
    NettyDataPlane.Backend backend() {
        return NettyDataPlane.Backend.NIO;
    }

    @Test
    void bothEnds_runTheEngineAskedFor() {
        assertInstanceOf(OpenSslContext.class,
                tls(SERVER, NamespaceAccess.OPEN).tls().serverContext(engine()), "the server's OpenSSL engine");
        assertInstanceOf(OpenSslContext.class,
                tls(CLIENT, NamespaceAccess.OPEN).tls().clientContext(engine()), "the client's OpenSSL engine");
    }
}
