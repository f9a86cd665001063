package dev.selene.node.config;

import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.intake.IntakeSizing;

import java.lang.management.ManagementFactory;

/**
 * This machine's memory, against which a node's host slots (warm tier plus intake, all mapped at start) and a pool
 * manager's store (mapped whole at start) are checked before anything is mapped, so that a size the machine cannot
 * hold is refused with one line rather than failing to map, or mapping and then being killed by the kernel.
 */
public final class MachineMemory {

    /** Room left beside the slots for the JVM itself: its heap, its threads, the device's buffers. */
    public static final long HEADROOM_BYTES = 1L << 30;

    private MachineMemory() {
    }

    /** Bytes of physical memory (a container's limit where there is one), or -1 where unknown. */
    public static long totalBytes() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            long total = os.getTotalMemorySize();
            return total > 0 ? total : -1;
        }
        return -1;
    }

    /** Bytes of host memory {@code config}'s node maps at start: its warm tier and its intake as sized. */
    public static long slotBytes(CacheConfig config) {
        IntakeSizing sizing = IntakeSizing.compute(config.layout(), config.concurrency(),
                config.effectiveWindowSlots(), config.warmBytes(), config.hostBudgetBytes());
        return (long) sizing.totalSlots() * config.layout().slotBytes();
    }

    /**
     * Why {@code config}'s node cannot map its slots on this machine, or null when it can (or the machine's memory
     * is unknown). The reason reads after "is invalid: " and ends with what is allowed.
     */
    public static String problem(CacheConfig config) {
        long total = totalBytes();
        if (total < 0) {
            return null;
        }
        long needed = slotBytes(config);
        if (needed <= total - HEADROOM_BYTES) {
            return null;
        }
        long room = total - HEADROOM_BYTES - (needed - config.warmBytes());
        return "the node maps " + (needed >> 20) + " MiB of host memory (warm tier and intake) and this machine has "
                + (total >> 20) + " MiB, 1 GiB of which the process needs beside it; allowed: "
                + (room > 0 ? "a warm tier of at most " + (room >> 20) + " MiB" : "a smaller warm tier or concurrency");
    }

    /**
     * Why a burst whose snapshots take {@code snapshotBytes} of simulated device memory (every record written into it
     * before the publications start) does not fit this machine beside the node of {@code config}, or null when it
     * does, when the machine's memory is unknown, or on {@code device} cuda (the snapshots are in the GPU's own
     * memory). One line, ending with what is allowed.
     */
    public static String snapshotsProblem(CacheConfig config, String device, long snapshotBytes) {
        if ("cuda".equals(device)) {
            return null;
        }
        long total = totalBytes();
        long node = slotBytes(config);
        if (total < 0 || node + snapshotBytes <= total - HEADROOM_BYTES) {
            return null;
        }
        return "the burst is too large for this machine: its snapshots take " + (snapshotBytes >> 20) + " MiB of "
                + "simulated device memory beside the node's " + (node >> 20) + " MiB of host slots, and this machine "
                + "has " + (total >> 20) + " MiB, 1 GiB of which the process needs beside them; allowed: fewer or "
                + "shorter conversations (--conversations, --tokens, --turns)";
    }

    /**
     * Why a pool manager's store of {@code storeBytes} cannot be mapped on this machine, or null when it can (or the
     * machine's memory is unknown). The reason reads after "is invalid: " and ends with what is allowed.
     */
    public static String storeProblem(long storeBytes) {
        long total = totalBytes();
        if (total < 0 || storeBytes <= total - HEADROOM_BYTES) {
            return null;
        }
        long room = total - HEADROOM_BYTES;
        return "the manager maps its whole store at start and this machine has " + (total >> 20) + " MiB, 1 GiB of "
                + "which the process needs beside it; allowed: a store of at most " + Math.max(0, room >> 20) + " MiB";
    }
}
