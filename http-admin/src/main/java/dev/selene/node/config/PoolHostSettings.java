package dev.selene.node.config;

import dev.selene.actors.pool.PoolCluster;

import java.time.Duration;

/**
 * Where a pool host's own cluster node listens ({@code selene.pool.bind}, {@code selene.pool.port}) and how long it
 * waits on a silent manager ({@code selene.pool.failover-after}); the managers it retires to are the cache's
 * {@code selene.pool.managers}.
 *
 * @param bind          address other pool members reach this host at
 * @param port          cluster port; 0 picks a free one
 * @param failoverAfter silence from a manager after which the host turns to another replica, or asks the stores
 */
public record PoolHostSettings(String bind, int port, Duration failoverAfter) {

    /** Where the host listens, with the default failover deadline. */
    public PoolHostSettings(String bind, int port) {
        this(bind, port, PoolCluster.DEFAULT_FAILOVER);
    }
}
