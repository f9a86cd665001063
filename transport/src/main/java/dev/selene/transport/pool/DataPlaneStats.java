package dev.selene.transport.pool;

/**
 * A data plane's figures.
 *
 * @param transport       which transport carries the bytes ({@code epoll} or {@code nio})
 * @param connections     connections open now, both directions
 * @param opened          connections opened so far, both directions
 * @param bytesSent       image and raw bytes sent
 * @param bytesReceived   image and raw bytes received
 * @param transfersFailed transfers (either side) that ended without every byte delivered
 * @param queuedBytes     bytes written to connections that the sockets have not taken yet (bounded by each
 *                        connection's high-water mark plus one part)
 */
public record DataPlaneStats(String transport, int connections, long opened, long bytesSent, long bytesReceived,
                             long transfersFailed, long queuedBytes) {
}
