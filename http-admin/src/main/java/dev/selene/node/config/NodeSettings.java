package dev.selene.node.config;

import dev.selene.engine.config.CacheConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * Everything a node is started with, validated: the cache, the admin server, the host's own address in a pool's
 * cluster and (for a manager node) the manager's settings.
 *
 * @param cache    the cache node (its pool managers included)
 * @param admin    the admin HTTP server
 * @param poolHost where a pool host's cluster node listens (used only when the cache has pool managers)
 * @param manager  the manager's settings (used by {@code selene manager})
 * @param createDiskDir whether the node creates a missing disk directory ({@code selene.disk.create}); without it a
 *                 missing directory is refused at start, so a mistyped path or an unmounted disk is not filled
 * @param source   where the settings came from, for logs: "defaults" or the file
 */
public record NodeSettings(CacheConfig cache, AdminSettings admin, PoolHostSettings poolHost,
                           ManagerSettings manager, boolean createDiskDir, String source) {

    /** The pool managers this host retires records to; empty = no pool. */
    public List<String> poolManagers() {
        return cache.poolManagers();
    }

    /**
     * The deployment shape in words: {@code memory-only}, {@code disk-only}, {@code memory+disk}, or with a pool
     * its tiers joined by {@code +} ({@code pool}, {@code memory+pool}, {@code disk+pool},
     * {@code memory+disk+pool}); {@code disabled} when nothing is configured.
     */
    public String shape() {
        CacheConfig c = cache;
        if (!c.enabled()) {
            return "disabled";
        }
        if (c.poolEnabled()) {
            List<String> tiers = new ArrayList<>();
            if (c.warmBytes() > 0) {
                tiers.add("memory");
            }
            if (c.diskDir() != null) {
                tiers.add("disk");
            }
            tiers.add("pool");
            return String.join("+", tiers);
        }
        if (c.diskDir() != null) {
            return c.warmBytes() > 0 ? "memory+disk" : "disk-only";
        }
        return "memory-only";
    }

    public NodeSettings withAdmin(AdminSettings a) {
        return new NodeSettings(cache, a, poolHost, manager, createDiskDir, source);
    }

    public NodeSettings withCache(CacheConfig c) {
        return new NodeSettings(c, admin, poolHost, manager, createDiskDir, source);
    }
}
