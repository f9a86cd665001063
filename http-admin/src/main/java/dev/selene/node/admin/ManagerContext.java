package dev.selene.node.admin;

import dev.selene.actors.pool.PoolManagerNode;
import dev.selene.node.config.NodeSettings;

/**
 * What a pool manager's admin routes serve from: the manager, its settings, and readiness.
 *
 * @param node               the manager node
 * @param address            its cluster address, {@code host:port}
 * @param settings           its validated settings
 * @param readiness          not ready while starting or stopping; ready otherwise once the node is an Up member
 * @param startedEpochMillis when the manager started
 */
public record ManagerContext(PoolManagerNode node, String address, NodeSettings settings, Readiness readiness,
                             long startedEpochMillis) {
}
