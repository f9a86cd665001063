package dev.selene.engine.config;

import dev.selene.engine.layout.Layout;
import dev.selene.engine.policy.Policies;

import java.time.Duration;
import java.util.List;

/**
 * The settings of one cache node, validated: layout, warm size, concurrency, host budget, device and the
 * optional tiers. Immutable; {@code with*} methods return changed copies.
 *
 * @param layout            model layout
 * @param warmBytes         warm-tier size; 0 means intake only
 * @param concurrency       active requests the engine runs at once (sizes the intake, intake sizing)
 * @param windowSlots       slots of one transfer window (sizes the intake floor); 0 means one whole record
 * @param hostBudgetBytes   the most host memory the slot pool may take
 * @param device            "auto", "simulated" or "cuda"
 * @param diskDir           disk tier directory, or null for no disk tier
 * @param diskBytes         disk tier size
 * @param poolManagers      pool manager addresses ({@code host:port}); empty = no pool tier
 * @param maxAge            max age of unused records, or null for off
 * @param drainOnShutdown   spill every parked record at shutdown
 * @param policy            the order in which memory drops records: {@code worth} (the default), {@code lru} or
 *                          {@code reuse}
 */
public record CacheConfig(Layout layout, long warmBytes, int concurrency, int windowSlots, long hostBudgetBytes,
                          String device, String diskDir, long diskBytes, List<String> poolManagers, Duration maxAge,
                          boolean drainOnShutdown, String policy) {

    /** Default host budget: 16 GiB, comfortably inside a serving host's memory. */
    public static final long DEFAULT_HOST_BUDGET_BYTES = 16L << 30;

    public CacheConfig {
        if (layout == null) {
            throw new IllegalArgumentException("layout is required");
        }
        if (warmBytes < 0) {
            throw new IllegalArgumentException("warm size " + warmBytes + " is invalid; allowed: 0 or more bytes");
        }
        if (concurrency < 1 || concurrency > 65536) {
            throw new IllegalArgumentException("concurrency " + concurrency + " is invalid; allowed: 1..65536");
        }
        if (windowSlots < 0) {
            throw new IllegalArgumentException("transfer window " + windowSlots + " is invalid; allowed: 0 or more slots");
        }
        if (hostBudgetBytes <= 0) {
            throw new IllegalArgumentException("host budget " + hostBudgetBytes + " is invalid; allowed: more than 0 bytes");
        }
        if (device == null || !device.equals("auto") && !device.equals("simulated") && !device.equals("cuda")) {
            throw new IllegalArgumentException("device '" + device + "' is invalid; allowed: auto, simulated, cuda");
        }
        if (diskBytes < 0) {
            throw new IllegalArgumentException("disk size " + diskBytes + " is invalid; allowed: 0 or more bytes");
        }
        poolManagers = poolManagers == null ? List.of() : List.copyOf(poolManagers);
        if (maxAge != null && (maxAge.isNegative() || maxAge.isZero())) {
            throw new IllegalArgumentException("max-age " + maxAge + " is invalid; allowed: a positive duration or off");
        }
        if (policy == null || !Policies.NAMES.contains(policy)) {
            throw new IllegalArgumentException("policy '" + policy + "' is invalid; allowed: "
                    + String.join(", ", Policies.NAMES));
        }
    }

    /** The settings as above with the default eviction policy, worth. */
    public CacheConfig(Layout layout, long warmBytes, int concurrency, int windowSlots, long hostBudgetBytes,
                       String device, String diskDir, long diskBytes, List<String> poolManagers, Duration maxAge,
                       boolean drainOnShutdown) {
        this(layout, warmBytes, concurrency, windowSlots, hostBudgetBytes, device, diskDir, diskBytes, poolManagers,
                maxAge, drainOnShutdown, Policies.DEFAULT);
    }

    /** A memory-only node of {@code warmBytes} for {@code layout} with defaults elsewhere. */
    public static CacheConfig memoryOnly(Layout layout, long warmBytes) {
        return new CacheConfig(layout, warmBytes, 32, 0, DEFAULT_HOST_BUDGET_BYTES, "auto", null, 0, List.of(),
                null, false, Policies.DEFAULT);
    }

    /** Whether the node retires records to a shared pool. */
    public boolean poolEnabled() {
        return !poolManagers.isEmpty();
    }

    /** Whether any tier is configured; a node without one answers {@code Disabled}. */
    public boolean enabled() {
        return warmBytes > 0 || diskDir != null || poolEnabled();
    }

    /** Whether records have nowhere durable to go, so the coldest are simply evicted (memory-only eviction). */
    public boolean memoryOnly() {
        return diskDir == null && !poolEnabled();
    }

    /** Slots of one transfer window: the configured value, or one record with a row. */
    public int effectiveWindowSlots() {
        return windowSlots > 0 ? windowSlots : layout.slotsPerRecord(true);
    }

    public CacheConfig withWarmBytes(long bytes) {
        return new CacheConfig(layout, bytes, concurrency, windowSlots, hostBudgetBytes, device, diskDir, diskBytes,
                poolManagers, maxAge, drainOnShutdown, policy);
    }

    public CacheConfig withConcurrency(int n) {
        return new CacheConfig(layout, warmBytes, n, windowSlots, hostBudgetBytes, device, diskDir, diskBytes,
                poolManagers, maxAge, drainOnShutdown, policy);
    }

    public CacheConfig withHostBudgetBytes(long bytes) {
        return new CacheConfig(layout, warmBytes, concurrency, windowSlots, bytes, device, diskDir, diskBytes,
                poolManagers, maxAge, drainOnShutdown, policy);
    }

    public CacheConfig withDevice(String kind) {
        return new CacheConfig(layout, warmBytes, concurrency, windowSlots, hostBudgetBytes, kind, diskDir, diskBytes,
                poolManagers, maxAge, drainOnShutdown, policy);
    }

    public CacheConfig withWindowSlots(int slots) {
        return new CacheConfig(layout, warmBytes, concurrency, slots, hostBudgetBytes, device, diskDir, diskBytes,
                poolManagers, maxAge, drainOnShutdown, policy);
    }

    public CacheConfig withDisk(String dir, long bytes) {
        return new CacheConfig(layout, warmBytes, concurrency, windowSlots, hostBudgetBytes, device, dir, bytes,
                poolManagers, maxAge, drainOnShutdown, policy);
    }

    public CacheConfig withPool(List<String> managers) {
        return new CacheConfig(layout, warmBytes, concurrency, windowSlots, hostBudgetBytes, device, diskDir, diskBytes,
                managers, maxAge, drainOnShutdown, policy);
    }

    public CacheConfig withMaxAge(Duration age) {
        return new CacheConfig(layout, warmBytes, concurrency, windowSlots, hostBudgetBytes, device, diskDir, diskBytes,
                poolManagers, age, drainOnShutdown, policy);
    }

    public CacheConfig withDrainOnShutdown(boolean drain) {
        return new CacheConfig(layout, warmBytes, concurrency, windowSlots, hostBudgetBytes, device, diskDir, diskBytes,
                poolManagers, maxAge, drain, policy);
    }

    public CacheConfig withPolicy(String name) {
        return new CacheConfig(layout, warmBytes, concurrency, windowSlots, hostBudgetBytes, device, diskDir, diskBytes,
                poolManagers, maxAge, drainOnShutdown, name);
    }
}
