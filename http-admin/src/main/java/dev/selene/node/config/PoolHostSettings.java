package dev.selene.node.config;

import dev.selene.actors.pool.PoolSecurity;

import java.util.Objects;

/**
 * Where a pool node's own cluster node listens ({@code selene.pool.bind}, {@code selene.pool.port}) and how it
 * secures the pool's two planes ({@code selene.pool.tls}, {@code selene.pool.plain-text}, and a manager's
 * {@code selene.manager.access}); the managers a host retires to are the cache's {@code selene.pool.managers}.
 *
 * @param bind     address other pool members reach this host at
 * @param port     cluster port; 0 picks a free one
 * @param security TLS (the node's certificates) or plain text, and a manager's namespace rules
 */
public record PoolHostSettings(String bind, int port, PoolSecurity security) {

    public PoolHostSettings {
        Objects.requireNonNull(security, "security");
    }

    /** Plain text where allowed, no namespace rules. */
    public PoolHostSettings(String bind, int port) {
        this(bind, port, PoolSecurity.DEFAULT);
    }
}
