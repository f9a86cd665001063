package dev.selene.node.manager;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.SettingsException;
import dev.selene.actors.pool.ManagerConfig;
import dev.selene.actors.pool.PoolCluster;
import dev.selene.actors.pool.PoolManagerNode;
import dev.selene.node.admin.AdminServer;
import dev.selene.node.admin.ManagerContext;
import dev.selene.node.admin.PrometheusMetrics;
import dev.selene.node.admin.Readiness;
import dev.selene.node.config.EnvironmentCheck;
import dev.selene.node.config.ManagerSettings;
import dev.selene.node.config.NodeSettings;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.BindException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A running pool manager ({@code selene manager}): the manager's cluster node (its store and its share of the
 * directory) and its admin HTTP server, stopped in order by Pekko's coordinated shutdown (on {@link #stop()},
 * {@link #close()}, or the JVM's shutdown hook): not ready → unbind the admin server → hand the records no other
 * manager holds to the others → leave the cluster (its directory shards move to the other managers) → stop the
 * actors.
 */
public final class ManagerNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ManagerNode.class);

    private final NodeSettings settings;
    private final PoolManagerNode node;
    private final AdminServer admin;
    private final Readiness readiness = new Readiness();
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    private ManagerNode(NodeSettings settings, PoolManagerNode node) {
        this.settings = settings;
        this.node = node;
        long started = System.currentTimeMillis();
        try {
            this.admin = AdminServer.start(new ManagerContext(node, clusterAddress(), settings, readiness, started));
        } catch (RuntimeException e) {
            node.close();
            throw e;
        }
        addShutdownTasks();
        node.system().getWhenTerminated().whenComplete((d, e) -> stopped.complete(null));
        if (settings.manager().seeds().isEmpty()) {
            Cluster cluster = Cluster.get(node.system());
            cluster.manager().tell(Join.create(cluster.selfMember().address()));
        }
        readiness.ready();
        LOG.info("selene manager started: {} ({}), admin http://{}; it takes traffic once it is an Up member of the "
                + "pool's cluster", node.address(), settings.source(), admin.address());
    }

    /**
     * Starts a manager with {@code settings}: its cluster node on {@code selene.manager.bind:port}, joining
     * through the seeds (or forming a cluster of its own without any), and its admin server. A store this machine's
     * memory cannot hold, or a cluster, data or admin address that cannot be bound, is a {@link SettingsException}
     * naming the setting, found before anything starts.
     */
    public static ManagerNode start(NodeSettings settings) {
        EnvironmentCheck.checkManager(settings);
        ManagerSettings m = settings.manager();
        ManagerConfig config = new ManagerConfig(settings.cache().layout(), m.storeBytes(), m.maxAge(), m.replicas(),
                ManagerConfig.DEFAULT_DIRECTORY_SHARDS, m.dataPort());
        PrometheusMetrics.start();
        Config pekko = PoolCluster.config(m.bind(), m.port(), m.seeds(), PoolCluster.MANAGER_ROLE,
                settings.poolHost().security(),
                ConfigFactory.parseMap(Map.of("pekko.coordinated-shutdown.exit-jvm", "off"))
                        .withFallback(CacheSettings.standaloneSystemConfig()));
        PoolManagerNode node;
        try {
            node = PoolManagerNode.start(config, pekko);
        } catch (RuntimeException e) {
            BindException bind = bindFailure(e);
            if (bind == null) {
                throw e;
            }
            // Taken between the check above and the start.
            throw new SettingsException("selene.manager.port = '" + m.port() + "' is invalid: it cannot be bound on "
                    + m.bind() + " (" + bind.getMessage() + "); allowed: a free port, or 0 for any free port");
        }
        return new ManagerNode(settings, node);
    }

    private static BindException bindFailure(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof BindException b) {
                return b;
            }
        }
        return null;
    }

    private void addShutdownTasks() {
        CoordinatedShutdown cs = CoordinatedShutdown.get(node.system());
        cs.addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(), "selene-manager-not-ready", () -> {
            readiness.notReady("stopping");
            LOG.info("selene manager stopping: leaving the cluster");
            return CompletableFuture.completedFuture(Done.getInstance());
        });
        cs.addTask(CoordinatedShutdown.PhaseServiceUnbind(), "selene-manager-admin-unbind", admin::stop);
        cs.addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(), "selene-manager-stopped", () -> {
            LOG.info("selene manager stopping its actors (cluster status {})",
                    Cluster.get(node.system()).selfMember().status());
            return CompletableFuture.completedFuture(Done.getInstance());
        });
    }

    /** This manager's cluster address, {@code host:port}: what hosts list in {@code selene.pool.managers}. */
    public String clusterAddress() {
        Address a = node.system().address();
        return a.getHost().orElse(settings.manager().bind()) + ":" + a.getPort().orElse(settings.manager().port());
    }

    /** The admin server's port (the one picked when the setting was 0). */
    public int adminPort() {
        return admin.port();
    }

    /** The manager's cluster node. */
    public PoolManagerNode node() {
        return node;
    }

    public NodeSettings settings() {
        return settings;
    }

    /** Starts the coordinated shutdown (leaving the cluster) and returns at once; see {@link #whenStopped()}. */
    public void stop() {
        CoordinatedShutdown.get(node.system()).run(CoordinatedShutdown.unknownReason());
    }

    /** Completes when the manager has stopped. */
    public CompletionStage<Void> whenStopped() {
        return stopped;
    }

    /** Stops the manager through its coordinated shutdown and waits for it. */
    @Override
    public void close() {
        stop();
        stopped.join();
    }
}
