package dev.selene.transport.pool;

import dev.selene.transport.tls.PoolTls;

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
}
