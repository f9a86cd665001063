package dev.selene.transport.pool;

import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.BeforeAll;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The data plane contract on Netty's native epoll transport (Linux). */
class NettyEpollDataPlaneTest extends DataPlaneContract {

    @BeforeAll
    static void epollLoads() {
        assumeTrue(Epoll.isAvailable(), () -> "Netty's epoll does not load here: " + Epoll.unavailabilityCause());
    }

    @Override
    DataPlane serving(Duration silence, RecordService store) {
        return NettyDataPlane.serve("127.0.0.1", 0, null, NettyDataPlane.Backend.EPOLL, silence, 1, store);
    }

    @Override
    DataPlane sending(Duration silence) {
        return NettyDataPlane.client(NettyDataPlane.Backend.EPOLL, silence, 1);
    }

    @Test
    void bothEnds_carryTheirBytesOnTheTransportAskedFor() {
        try (DataPlane server = serving(SILENCE, new TestStore(dev.selene.engine.layout.Layout.small()));
             DataPlane client = sending(SILENCE)) {
            assertEquals("epoll", server.stats().transport());
            assertEquals("epoll", client.stats().transport());
        }
    }
}
