package dev.selene.node.admin;

import dev.selene.actors.api.SeleneCache;
import dev.selene.node.config.NodeSettings;

/**
 * What the admin routes serve from: the node, its settings, the status page's history, the drain hook and
 * readiness.
 *
 * @param cache              the node
 * @param settings           its validated settings
 * @param history            status-page samples and recent events
 * @param drain              spills parked records for {@code POST /drain}
 * @param readiness          the answer of {@code GET /ready}
 * @param startedEpochMillis when the node started
 */
public record AdminContext(SeleneCache cache, NodeSettings settings, StatusHistory history, DrainHook drain,
                           Readiness readiness, long startedEpochMillis) {
}
