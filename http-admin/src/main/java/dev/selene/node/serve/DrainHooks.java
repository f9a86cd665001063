package dev.selene.node.serve;

import dev.selene.actors.api.SeleneCache;
import dev.selene.node.admin.DrainHook;

/**
 * The drain a node offers: with no durable tier nothing is parked anywhere it could go; with a disk tier
 * the node's spill scheduler writes every parked record, ancestors first; with a pool it retires them to the
 * managers.
 */
final class DrainHooks {

    private DrainHooks() {
    }

    static DrainHook forNode(SeleneCache cache) {
        if (cache.config().memoryOnly()) {
            return DrainHook.nothingToDrain("no disk tier or pool is configured: nothing is parked to a durable tier");
        }
        return timeout -> cache.drain(timeout).thenApply(r -> new DrainHook.DrainReport(true, r.written(),
                r.skipped(), r.timedOut() ? "timed out after " + timeout.toSeconds() + " s" : "drained"));
    }
}
