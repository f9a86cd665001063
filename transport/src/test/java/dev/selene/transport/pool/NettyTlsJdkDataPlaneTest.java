package dev.selene.transport.pool;

import dev.selene.transport.tls.PoolTls;
import io.netty.handler.ssl.JdkSslContext;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** The data plane contract with TLS in the JDK's engine, on the best Netty transport here. */
class NettyTlsJdkDataPlaneTest extends TlsDataPlaneContract {

    @Override
    PoolTls.Engine engine() {
        return PoolTls.Engine.JDK;
    }

    @Override
    NettyDataPlane.Backend backend() {
        return NettyDataPlane.Backend.best();
    }

    @Test
    void bothEnds_runTheEngineAskedFor() {
        assertInstanceOf(JdkSslContext.class,
                tls(SERVER, NamespaceAccess.OPEN).tls().serverContext(engine()), "the server's JDK engine");
        assertInstanceOf(JdkSslContext.class,
                tls(CLIENT, NamespaceAccess.OPEN).tls().clientContext(engine()), "the client's JDK engine");
    }
}
