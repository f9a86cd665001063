package dev.selene.transport.pool;

/**
 * How a push ended well: the peer stored the image ({@code bytes} sent), or held the record already (nothing sent).
 *
 * @param alreadyHeld whether the peer held the record before and took no bytes
 * @param bytes       image bytes sent
 */
public record Pushed(boolean alreadyHeld, long bytes) {
}
