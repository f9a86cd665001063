package dev.selene.node.manager;

import dev.selene.actors.value.Durations;
import dev.selene.engine.config.ByteSize;
import dev.selene.node.cli.ClusterRemoval;
import dev.selene.node.config.ManagerOptions;
import dev.selene.node.config.ManagerSettings;
import dev.selene.node.config.NodeSettings;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import sun.misc.Signal;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code selene manager}: a pool manager with its admin HTTP server; SIGTERM or SIGINT leaves the cluster and exits
 * with 0; a manager the cluster downed exits with {@link ClusterRemoval#EXIT_CODE} after one line saying so.
 */
@Command(name = "manager", mixinStandardHelpOptions = true,
        description = "Run a pool manager (holds records that pool hosts retire) with its admin HTTP server until "
                + "SIGTERM (or Ctrl-C), which hands the records no other manager holds to the others, leaves the "
                + "cluster and exits 0. Exit code 4: the other members of the "
                + "cluster downed it (restart it to rejoin); 2: a setting is invalid; 1: the manager failed.")
public final class ManagerCommand implements Callable<Integer> {

    @Mixin
    ManagerOptions options;

    @Override
    public Integer call() {
        NodeSettings settings = options.load();
        // A stop signal is a request to stop, not a failure: the manager leaves the cluster and main returns 0
        // (the JVM's default handler would exit with 128 + the signal's number). One that arrives while the
        // manager starts stops it as soon as it is up.
        CompletableFuture<ManagerNode> started = new CompletableFuture<>();
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), s -> started.thenAccept(ManagerNode::stop));
        }
        ManagerNode node = ManagerNode.start(settings);
        ManagerSettings m = settings.manager();
        System.err.printf("selene manager: cluster %s, layout %s, store %s, replicas %d, max age %s, seeds %s; "
                        + "admin http://%s:%d/%n", node.clusterAddress(), settings.cache().layout().name(),
                ByteSize.format(m.storeBytes()), m.replicas(),
                m.maxAge() == null ? "off" : dev.selene.actors.value.Durations.human(m.maxAge()),
                m.seeds().isEmpty() ? "none (a cluster of its own)" : String.join(",", m.seeds()),
                dev.selene.node.admin.AdminServer.urlHost(settings.admin().bind()), node.adminPort());
        System.err.flush();
        started.complete(node);
        if (!m.seeds().isEmpty()) {
            sayIfNotJoined(node, m, settings.poolHost().joinTimeout());
        }
        node.whenStopped().toCompletableFuture().join();
        if (ClusterRemoval.downed(node.node().system())) {
            System.err.println(ClusterRemoval.line("selene manager"));
            return ClusterRemoval.EXIT_CODE;
        }
        if (node.node().misfit() != null) {
            System.err.println("selene: " + node.node().misfit());
            return 2;
        }
        if (node.node().storeStopped()) {
            System.err.println("selene manager: failed: its store stopped (an earlier log line says why)");
            return 1;
        }
        System.err.println("selene manager: stopped");
        return 0;
    }

    /**
     * Says once, on standard error, when the manager is still outside the pool's cluster after the join timeout
     * ({@code selene.pool.join-timeout}, as for a host): the cluster library's own warnings about the seeds repeat
     * every few seconds and never say what it means. The manager keeps trying; {@code /ready} answers 503 meanwhile.
     */
    private static void sayIfNotJoined(ManagerNode node, ManagerSettings m, Duration wait) {
        CompletableFuture.delayedExecutor(wait.toMillis(), TimeUnit.MILLISECONDS).execute(() -> {
            // Removed is also what a node that has not joined any cluster yet reports about itself.
            MemberStatus self = Cluster.get(node.node().system()).selfMember().status();
            boolean outside = self == MemberStatus.removed() || self == MemberStatus.joining()
                    || self == MemberStatus.weaklyUp();
            if (outside && !node.whenStopped().toCompletableFuture().isDone()) {
                System.err.println("selene manager: not a member of the pool's cluster after "
                        + Durations.human(wait) + ": none of the seeds (" + String.join(",", m.seeds())
                        + ") let it join; it keeps trying, and /ready answers 503 until it joins (is the first seed "
                        + "running, is each seed spelled as that manager binds it (localhost and 127.0.0.1 are two "
                        + "names to the cluster), and does this manager use TLS (selene.pool.tls) exactly when the "
                        + "others do?)");
            }
        });
    }
}
