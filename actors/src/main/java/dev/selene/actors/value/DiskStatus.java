package dev.selene.actors.value;

/**
 * A point-in-time view of a node's disk tier.
 *
 * @param records                 committed record files
 * @param bytes                   their total size
 * @param capacityBytes           the tier's size
 * @param writesInFlight          record writes in flight now (the disk queue depth)
 * @param filesBeingRead          record files restores have matched and are reading now, each once (kept on disk
 *                                until read)
 * @param readBytesPerSecond      the restore cost estimator's current read bandwidth
 * @param readSamples             waves the estimator has seen
 */
public record DiskStatus(int records, long bytes, long capacityBytes, int writesInFlight, int filesBeingRead,
                         double readBytesPerSecond, long readSamples) {
}
