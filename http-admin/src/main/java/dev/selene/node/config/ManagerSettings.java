package dev.selene.node.config;

import java.time.Duration;
import java.util.List;

/**
 * A pool manager node's settings (B20). Parsed and validated; the manager itself comes with the pool.
 *
 * @param bind       cluster address to bind
 * @param port       cluster port
 * @param seeds      cluster seed nodes ({@code pekko://selene@host:port}); empty forms a cluster alone
 * @param storeBytes bytes of records the manager keeps
 * @param maxAge     records unused for longer are dropped; null = never
 */
public record ManagerSettings(String bind, int port, List<String> seeds, long storeBytes, Duration maxAge) {
}
