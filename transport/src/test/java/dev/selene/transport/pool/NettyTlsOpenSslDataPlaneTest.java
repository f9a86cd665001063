package dev.selene.transport.pool;

import dev.selene.transport.tls.PoolTls;
import org.junit.jupiter.api.BeforeAll;

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
}
