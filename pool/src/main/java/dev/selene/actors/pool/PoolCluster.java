package dev.selene.actors.pool;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigValueFactory;

import dev.selene.actors.api.SettingsException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The Pekko settings of a pool node: cluster address, seed nodes and role over the library's cluster defaults. */
public final class PoolCluster {

    /**
     * Why a pool host stopped by itself: every manager had left its cluster for longer than its join timeout (a host
     * rejoins managers that left only by starting again).
     */
    public static final class PoolLost implements org.apache.pekko.actor.CoordinatedShutdown.Reason {
        public static final PoolLost INSTANCE = new PoolLost();

        private PoolLost() {
        }
    }


    /** The actor system name every node of a pool shares (cluster members must agree on it). */
    public static final String SYSTEM_NAME = "selene";
    /** The role of manager nodes (they run the stores and the directory). */
    public static final String MANAGER_ROLE = "manager";
    /** The role of hosts. */
    public static final String HOST_ROLE = "host";

    private static final String RESOURCE = "/selene-cluster.conf";

    private PoolCluster() {
    }

    /**
     * Settings for a node bound to {@code hostname:port} (0: any free port) with role {@code role}, joining the
     * cluster through {@code seeds} ({@code host:port} of manager nodes; empty: it forms a cluster alone), over
     * {@code base} (the node's own Pekko settings, references included: the cluster file's keys win over it).
     */
    public static Config config(String hostname, int port, List<String> seeds, String role, Config base) {
        return config(hostname, port, seeds, role, PoolSecurity.from(base), base);
    }

    /**
     * As {@link #config(String, int, List, String, Config)}, secured by {@code security}: TLS on the cluster's
     * transport (and, read from the system's settings, on the node's data plane), or plain text where it is allowed.
     *
     * @throws IllegalArgumentException one line saying what to set, when the node may not run as set
     */
    public static Config config(String hostname, int port, List<String> seeds, String role, PoolSecurity security,
                                Config base) {
        security.requireUsable(hostname, seeds);
        List<String> seedNodes = new ArrayList<>(seeds.size());
        for (String s : seeds) {
            seedNodes.add(seedNode(s));
        }
        Config cluster = ConfigFactory.parseResources(PoolCluster.class, RESOURCE,
                ConfigParseOptions.defaults().setAllowMissing(false));
        return ConfigFactory.empty()
                .withValue("pekko.remote.artery.canonical.hostname", ConfigValueFactory.fromAnyRef(hostname))
                .withValue("pekko.remote.artery.canonical.port", ConfigValueFactory.fromAnyRef(port))
                .withValue("pekko.cluster.seed-nodes", ConfigValueFactory.fromIterable(seedNodes))
                .withValue("pekko.cluster.roles", ConfigValueFactory.fromIterable(List.of(role)))
                .withFallback(security.pekko())
                .withFallback(cluster)
                .withFallback(base)
                .resolve();
    }

    /** The failover deadline's setting: silence from a pool manager after which a host turns elsewhere. */
    public static final String FAILOVER_SETTING = "selene.pool.failover-after";
    /** The failover deadline where the settings do not have one. */
    public static final Duration DEFAULT_FAILOVER = Duration.ofMillis(500);

    /**
     * The failover deadline in {@code config} ({@value #FAILOVER_SETTING}), or the default without one; a value
     * outside 10 ms .. 1 min is a {@link SettingsException} naming the setting.
     */
    public static Duration failoverAfter(Config config) {
        if (!config.hasPath(FAILOVER_SETTING)) {
            return DEFAULT_FAILOVER;
        }
        Duration d;
        try {
            d = config.getDuration(FAILOVER_SETTING);
        } catch (com.typesafe.config.ConfigException e) {
            throw SettingsException.invalid(FAILOVER_SETTING, config.getValue(FAILOVER_SETTING).unwrapped(),
                    "a duration of 10ms .. 1m, e.g. 500ms");
        }
        if (d.toMillis() < 10 || d.compareTo(Duration.ofMinutes(1)) > 0) {
            throw SettingsException.invalid(FAILOVER_SETTING, config.getValue(FAILOVER_SETTING).unwrapped(),
                    "a duration of 10ms .. 1m, e.g. 500ms");
        }
        return d;
    }

    /** The seed node address of a manager at {@code host:port}; a full {@code pekko://} address is kept as it is. */
    public static String seedNode(String address) {
        return address.startsWith("pekko://") ? address : "pekko://" + SYSTEM_NAME + "@" + address;
    }
}
