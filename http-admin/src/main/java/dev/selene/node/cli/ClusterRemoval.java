package dev.selene.node.cli;

import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Why a cluster member stopped when nobody asked it to: the split-brain resolver downed it (it and the other members
 * lost sight of each other, typically after a pause, a partition or an overloaded machine, and it was on the side
 * with fewer members), or, on a pool host, every manager left its cluster. A process supervisor should restart such
 * a node: {@code selene manager} and {@code selene serve} exit with {@link #EXIT_CODE} after one line saying so, where
 * a stop they were asked for (SIGTERM) exits 0.
 */
public final class ClusterRemoval {

    /** The exit code of a node the cluster removed. */
    public static final int EXIT_CODE = 4;

    private ClusterRemoval() {
    }

    /** Whether {@code system} stopped because the cluster downed this node. */
    public static boolean downed(ActorSystem<?> system) {
        return CoordinatedShutdown.get(system).getShutdownReason()
                .map(r -> r.equals(CoordinatedShutdown.clusterDowningReason())).orElse(false);
    }

    /** Whether {@code system} (a pool host's) stopped because every pool manager had left its cluster. */
    public static boolean poolLost(ActorSystem<?> system) {
        return CoordinatedShutdown.get(system).getShutdownReason()
                .map(r -> r == dev.selene.actors.pool.PoolCluster.PoolLost.INSTANCE).orElse(false);
    }

    /** The line a pool host prints when it stopped because every pool manager had left its cluster. */
    public static String poolLostLine(String command) {
        return command + ": stopped: every pool manager left this host's cluster and none came back within "
                + "selene.pool.join-timeout (they were stopped or restarted); exit code " + EXIT_CODE
                + " (restart it to join them again)";
    }

    /** The line {@code command} prints when the cluster removed it. */
    public static String line(String command) {
        return command + ": removed from the cluster: the split-brain resolver downed this node (it and the other "
                + "members lost sight of each other: a pause such as SIGSTOP or a long GC here or there, a partition, "
                + "an overloaded machine, or the others killed; the side with fewer members downs itself); exit code "
                + EXIT_CODE + " (restart it to rejoin)";
    }
}
