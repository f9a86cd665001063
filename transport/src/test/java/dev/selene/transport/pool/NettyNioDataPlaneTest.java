package dev.selene.transport.pool;

import java.time.Duration;

/** The data plane contract on Netty's Java NIO transport (everywhere). */
class NettyNioDataPlaneTest extends DataPlaneContract {

    @Override
    DataPlane serving(Duration silence, RecordService store) {
        return NettyDataPlane.serve("127.0.0.1", 0, null, NettyDataPlane.Backend.NIO, silence, 1, store);
    }

    @Override
    DataPlane sending(Duration silence) {
        return NettyDataPlane.client(NettyDataPlane.Backend.NIO, silence, 1);
    }
}
