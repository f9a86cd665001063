package dev.selene.actors.pool;

import dev.selene.engine.layout.Layout;

import java.time.Duration;
import java.util.Objects;

/**
 * What a pool manager's store and directory run with.
 *
 * @param layout          the record layout of the hosts it serves (its slots are that layout's slots)
 * @param storeBytes      bytes of record images it keeps; the least recently used go first when full
 * @param maxAge          records unused for longer are dropped; null = never
 * @param replicas        managers that must hold a record before it is committed (fewer when fewer are up)
 * @param directoryShards namespace shards of the directory (the same on every node of a cluster)
 * @param dataPort        the TCP port record bytes arrive on and leave from (0: any free port; peers learn it with
 *                        each transfer)
 */
public record ManagerConfig(Layout layout, long storeBytes, Duration maxAge, int replicas, int directoryShards,
                            int dataPort) {

    /** Replicas by default: a record survives the loss of one manager. */
    public static final int DEFAULT_REPLICAS = 2;
    /** Directory shards by default. */
    public static final int DEFAULT_DIRECTORY_SHARDS = 64;

    public ManagerConfig {
        Objects.requireNonNull(layout, "layout");
        if (storeBytes < layout.slotBytes()) {
            throw new IllegalArgumentException("store size " + storeBytes + " is invalid; allowed: at least one slot ("
                    + layout.slotBytes() + " bytes)");
        }
        if (replicas < 1 || replicas > 3) {
            throw new IllegalArgumentException("replicas = " + replicas + " is invalid; allowed: 1..3");
        }
        if (dataPort < 0 || dataPort > 65535) {
            throw new IllegalArgumentException("data port = " + dataPort + " is invalid; allowed: 0..65535");
        }
        if (directoryShards < 1 || directoryShards > 4096) {
            throw new IllegalArgumentException("directory shards = " + directoryShards
                    + " is invalid; allowed: 1..4096");
        }
    }

    /** A manager whose data plane listens on any free port. */
    public ManagerConfig(Layout layout, long storeBytes, Duration maxAge, int replicas, int directoryShards) {
        this(layout, storeBytes, maxAge, replicas, directoryShards, 0);
    }
}
