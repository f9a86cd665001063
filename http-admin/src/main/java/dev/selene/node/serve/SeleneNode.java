package dev.selene.node.serve;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.cache.HostCache;
import dev.selene.engine.config.CacheConfig;
import dev.selene.node.admin.AdminContext;
import dev.selene.node.admin.AdminServer;
import dev.selene.node.admin.DrainHook;
import dev.selene.node.admin.NodeSampler;
import dev.selene.node.admin.PrometheusMetrics;
import dev.selene.node.admin.Readiness;
import dev.selene.node.admin.StatusHistory;
import dev.selene.node.config.EnvironmentCheck;
import dev.selene.node.config.NodeSettings;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DeviceCopiers;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A running node: the cache (which records its own metrics), its admin HTTP server serving them, and the status
 * sampler, stopped in order by Pekko's coordinated shutdown (on {@link #stop()} or {@link #close()}, which
 * {@code selene serve} calls on SIGTERM, or through the JVM's shutdown hook on any other exit): not ready → unbind
 * the admin server → drain when {@code drain-on-shutdown} is set → stop the actors.
 */
public final class SeleneNode implements AutoCloseable {

    /** Why a node stops when its owner asked it to (a stop signal, or {@link #close()}), as its stop log names it. */
    private enum StopRequested implements CoordinatedShutdown.Reason {
        INSTANCE
    }

    private static final Logger LOG = LoggerFactory.getLogger(SeleneNode.class);

    /** How long a drain at shutdown may take before the node stops anyway. */
    public static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(5);

    private final NodeSettings settings;
    private final SeleneCache cache;
    private final DeviceCopier copier;
    private final boolean ownsCopier;
    private final AdminServer admin;
    private final NodeSampler sampler;
    private final Readiness readiness = new Readiness();
    private final DrainHook drain;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    private SeleneNode(NodeSettings settings, DeviceCopier copier, boolean ownsCopier) {
        this.settings = settings;
        this.copier = copier;
        this.ownsCopier = ownsCopier;
        CacheConfig c = settings.cache();
        PrometheusMetrics.start();
        this.cache = SeleneCache.start(c, copier, pekkoConfig(settings), "selene");
        this.drain = DrainHooks.forNode(cache);
        try {
            StatusHistory history = new StatusHistory(settings.admin().historySamples());
            this.sampler = NodeSampler.start(cache, settings.admin().sampleInterval(), history);
            long started = System.currentTimeMillis();
            this.admin = AdminServer.start(new AdminContext(cache, settings, history, drain, readiness, started));
        } catch (RuntimeException e) {
            cache.close();
            throw e;
        }
        addShutdownTasks();
        cache.system().getWhenTerminated().whenComplete((d, e) -> {
            if (ownsCopier) {
                copier.close();
            }
            stopped.complete(null);
        });
        readiness.ready();
        LOG.info("selene node up: {} ({}), admin http://{}", settings.shape(), settings.source(), admin.address());
    }

    /**
     * Starts a node on the device its settings select; the node closes that device when it stops. What the
     * settings name on this machine is checked first ({@link EnvironmentCheck}), before any memory is mapped. A
     * pool host joins the managers' cluster first and fails to start, with one line, when no manager's store is
     * reachable.
     */
    public static SeleneNode start(NodeSettings settings) {
        EnvironmentCheck.check(settings);
        return new SeleneNode(settings, DeviceCopiers.select(settings.cache().device()), true);
    }

    /** Starts a node on the caller's device copier, which the caller keeps; checked first as {@link #start}. */
    public static SeleneNode start(NodeSettings settings, DeviceCopier copier) {
        EnvironmentCheck.check(settings);
        return new SeleneNode(settings, copier, false);
    }

    /**
     * The longest a stop of this node should take: the sum of its coordinated shutdown's phase timeouts (the drain's
     * among them), the disk tier's wait for transfers in flight after them, and a margin; each step is bounded, but
     * an I/O call that never returns can hold its actor system for ever.
     */
    public Duration stopBound() {
        return Duration.ofMillis(CoordinatedShutdown.get(cache.system()).totalTimeout().toMillis())
                .plus(HostCache.DISK_TRANSFERS_AT_STOP).plusSeconds(30);
    }

    /** The node's actor system settings; a pool host's cluster address ({@code selene.pool.bind/port}) among them. */
    private static Config pekkoConfig(NodeSettings settings) {
        CacheConfig c = settings.cache();
        long drainSeconds = c.drainOnShutdown() ? DRAIN_TIMEOUT.toSeconds() + 10 : 5;
        return ConfigFactory.parseMap(Map.of(
                "pekko.coordinated-shutdown.phases.service-requests-done.timeout", drainSeconds + " s",
                "pekko.coordinated-shutdown.exit-jvm", "off",
                "selene.pool.bind", settings.poolHost().bind(),
                "selene.pool.port", settings.poolHost().port(),
                "selene.pool.failover-after", settings.poolHost().failoverAfter().toMillis() + "ms",
                "selene.pool.join-timeout", settings.poolHost().joinTimeout().toMillis() + "ms"))
                .withFallback(settings.poolHost().security().settings())
                .withFallback(CacheSettings.standaloneSystemConfig());
    }

    private void addShutdownTasks() {
        CoordinatedShutdown cs = CoordinatedShutdown.get(cache.system());
        cs.addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(), "selene-not-ready", () -> {
            readiness.notReady("stopping");
            return CompletableFuture.completedFuture(Done.getInstance());
        });
        cs.addTask(CoordinatedShutdown.PhaseServiceUnbind(), "selene-admin-unbind", () -> {
            sampler.close();
            return admin.stop();
        });
        cs.addTask(CoordinatedShutdown.PhaseServiceRequestsDone(), "selene-drain", this::drainAtShutdown);
        cs.addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(), "selene-stopped", () -> {
            LOG.info("selene node stopping its actors ({})", cs.getShutdownReason()
                    .map(r -> r.getClass().getSimpleName().replace("$", "")).orElse("stop"));
            return CompletableFuture.completedFuture(Done.getInstance());
        });
    }

    /**
     * Says what happens to the records held only in memory; the drain itself, when asked for, is the cache's own
     * task in this phase (it logs what it wrote).
     */
    private CompletionStage<Done> drainAtShutdown() {
        if (!settings.cache().drainOnShutdown()) {
            LOG.info("stopping without drain: records held only in memory are dropped");
        } else if (cache.config().memoryOnly()) {
            LOG.info("drain at shutdown: no disk tier or pool is configured: nothing is parked to a durable tier");
        }
        return CompletableFuture.completedFuture(Done.getInstance());
    }

    public SeleneCache cache() {
        return cache;
    }

    public NodeSettings settings() {
        return settings;
    }

    public int adminPort() {
        return admin.port();
    }

    public DeviceCopier copier() {
        return copier;
    }

    /** Completes when the node has stopped (after {@link #close()} or SIGTERM). */
    public CompletionStage<Void> whenStopped() {
        return stopped;
    }

    /** Starts the node's coordinated shutdown and returns at once; {@link #whenStopped()} completes at its end. */
    public void stop() {
        CoordinatedShutdown.get(cache.system()).run(StopRequested.INSTANCE);
    }

    /** Stops the node through its coordinated shutdown and waits for it. */
    @Override
    public void close() {
        stop();
        stopped.join();
    }
}
