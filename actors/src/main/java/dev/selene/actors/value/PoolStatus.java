package dev.selene.actors.value;

/**
 * A point-in-time view of what a node whose only durable tier is the shared pool remembers of it.
 *
 * @param records            records it retired to the pool and still remembers (resident or not)
 * @param bytes              their total size, counted as their images
 * @param capacityBytes      the most it remembers: what the managers it uses can hold, divided by the replica count
 * @param readBytesPerSecond the restore cost estimator's current pool read bandwidth
 * @param readSamples        waves of pool reads the estimator has seen
 */
public record PoolStatus(int records, long bytes, long capacityBytes, double readBytesPerSecond, long readSamples) {
}
