package dev.selene.transport.pool;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

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

    @Test
    void bothEnds_carryTheirBytesOnTheTransportAskedFor() {
        try (DataPlane server = serving(SILENCE, new TestStore(dev.selene.engine.layout.Layout.small()));
             DataPlane client = sending(SILENCE)) {
            assertEquals("nio", server.stats().transport());
            assertEquals("nio", client.stats().transport());
        }
    }
}
