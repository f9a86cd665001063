package dev.selene.node.config;

import dev.selene.engine.config.CacheConfig;

import java.util.List;

/**
 * Everything a node is started with, validated: the cache, the admin server, the pool hosts it retires to and
 * (for a manager node) the manager's settings.
 *
 * @param cache        the cache node
 * @param admin        the admin HTTP server
 * @param poolManagers pool manager addresses; empty = no pool
 * @param manager      the manager's settings (used by {@code selene manager})
 * @param source       where the settings came from, for logs: "defaults" or the file
 */
public record NodeSettings(CacheConfig cache, AdminSettings admin, List<String> poolManagers,
                           ManagerSettings manager, String source) {

    /** The deployment shape in words: memory-only, disk-only, memory+disk, pool, or disabled. */
    public String shape() {
        CacheConfig c = cache;
        if (!c.enabled()) {
            return "disabled";
        }
        if (c.poolEnabled()) {
            return c.diskDir() != null ? "pool+disk" : "pool";
        }
        if (c.diskDir() != null) {
            return c.warmBytes() > 0 ? "memory+disk" : "disk-only";
        }
        return "memory-only";
    }

    public NodeSettings withAdmin(AdminSettings a) {
        return new NodeSettings(cache, a, poolManagers, manager, source);
    }

    public NodeSettings withCache(CacheConfig c) {
        return new NodeSettings(c, admin, poolManagers, manager, source);
    }
}
