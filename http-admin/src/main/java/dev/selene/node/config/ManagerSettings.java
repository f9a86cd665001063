package dev.selene.node.config;

import java.time.Duration;
import java.util.List;

/**
 * A pool manager node's settings ({@code selene manager}, pool manager). Its record layout is the hosts' own,
 * {@code selene.layout}; its admin server binds {@code selene.admin.bind} on {@link #adminPort()}.
 *
 * @param bind       cluster address to bind (other pool members must reach it)
 * @param port       cluster port; 0 picks a free one
 * @param seeds      cluster seed nodes as {@code host:port} (or {@code pekko://selene@host:port}); empty forms a
 *                   cluster alone
 * @param storeBytes bytes of records the manager keeps
 * @param maxAge     records unused for longer are dropped; null = never
 * @param replicas   managers that must hold a record before a retirement counts (1..3)
 * @param adminPort  the manager's admin HTTP port; 0 picks a free one
 * @param dataPort   the port record bytes arrive on and leave from, on the cluster address; 0 picks a free one
 */
public record ManagerSettings(String bind, int port, List<String> seeds, long storeBytes, Duration maxAge,
                              int replicas, int adminPort, int dataPort) {

    public ManagerSettings {
        seeds = List.copyOf(seeds);
    }
}
