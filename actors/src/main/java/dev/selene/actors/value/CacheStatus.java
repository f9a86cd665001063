package dev.selene.actors.value;

import java.util.Map;

/**
 * A point-in-time view of a node: slot occupancy, records per tier and counters.
 *
 * @param enabled        whether any tier is configured
 * @param totalSlots     slots in the pool (warm + intake)
 * @param intakeSlots    slots the intake keeps free
 * @param freeSlots      free slots now
 * @param cleanSlots     slots of records that can be dropped at once
 * @param residentRecords records resident in memory
 * @param inFlight       publications in flight
 * @param counters       named counters (publications by result, evictions, failures)
 * @param disk           the disk tier's view, or null without a disk tier
 * @param pool           the pool's view where it is the only durable tier, or null (no pool, or a disk besides it)
 * @param metricsNode    the value of the {@code node} tag on the node's metrics
 */
public record CacheStatus(boolean enabled, int totalSlots, int intakeSlots, int freeSlots, int cleanSlots,
                          int residentRecords, int inFlight, Map<String, Long> counters, DiskStatus disk,
                          PoolStatus pool, String metricsNode) {

    public int usedSlots() {
        return totalSlots - freeSlots;
    }
}
