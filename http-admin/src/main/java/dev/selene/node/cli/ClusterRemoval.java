package dev.selene.node.cli;

import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Why a cluster member stopped when nobody asked it to: the other members downed it (the failure detector found it
 * unreachable, typically after a pause, a partition or an overloaded machine, and the split-brain resolver removed
 * it). A process supervisor should restart such a node: {@code selene manager} and {@code selene serve} exit with
 * {@link #EXIT_CODE} after one line saying so, where a stop they were asked for (SIGTERM) exits 0.
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

    /** The line {@code command} prints when the cluster removed it. */
    public static String line(String command) {
        return command + ": removed from the cluster: the other members downed this node (their failure detector "
                + "found it unreachable and the split-brain resolver removed it); exit code " + EXIT_CODE
                + " (restart it to rejoin)";
    }
}
