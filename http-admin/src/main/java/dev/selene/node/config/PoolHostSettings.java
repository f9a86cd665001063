package dev.selene.node.config;

import dev.selene.actors.pool.PoolCluster;
import dev.selene.actors.pool.PoolSecurity;

import java.time.Duration;
import java.util.Objects;

/**
 * Where a pool node's own cluster node listens ({@code selene.pool.bind}, {@code selene.pool.port}), how long a host
 * waits on a silent manager ({@code selene.pool.failover-after}), how long a starting host waits for a manager
 * ({@code selene.pool.join-timeout}) and how it secures the pool's two planes
 * ({@code selene.pool.tls}, {@code selene.pool.plain-text}, and a manager's {@code selene.manager.access}); the
 * managers a host retires to are the cache's {@code selene.pool.managers}.
 *
 * @param bind          address other pool members reach this host at
 * @param port          cluster port; 0 picks a free one
 * @param failoverAfter silence from a manager after which the host turns to another replica, or asks the stores
 * @param joinTimeout   how long a starting host waits for a manager's store before it gives up
 * @param security      TLS (the node's certificates) or plain text, and a manager's namespace rules
 */
public record PoolHostSettings(String bind, int port, Duration failoverAfter, Duration joinTimeout,
                               PoolSecurity security) {

    /** How long a starting host waits for a manager unless told otherwise. */
    public static final Duration DEFAULT_JOIN_TIMEOUT = Duration.ofSeconds(20);

    public PoolHostSettings {
        Objects.requireNonNull(failoverAfter, "failoverAfter");
        Objects.requireNonNull(joinTimeout, "joinTimeout");
        Objects.requireNonNull(security, "security");
    }

    /** Where the host listens, with the default failover deadline, plain text where allowed and no namespace rules. */
    public PoolHostSettings(String bind, int port) {
        this(bind, port, PoolCluster.DEFAULT_FAILOVER, DEFAULT_JOIN_TIMEOUT, PoolSecurity.DEFAULT);
    }
}
