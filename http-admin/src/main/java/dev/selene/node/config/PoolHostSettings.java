package dev.selene.node.config;

/**
 * Where a pool host's own cluster node listens ({@code selene.pool.bind}, {@code selene.pool.port}); the managers
 * it retires to are the cache's {@code selene.pool.managers}.
 *
 * @param bind address other pool members reach this host at
 * @param port cluster port; 0 picks a free one
 */
public record PoolHostSettings(String bind, int port) {
}
