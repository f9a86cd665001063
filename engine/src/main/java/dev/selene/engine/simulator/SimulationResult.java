package dev.selene.engine.simulator;

/**
 * The outcome of one simulated replay: what was served from cache and what the node did.
 *
 * @param policy            the eviction policy's name
 * @param rows              the row rule's label
 * @param requests          requests replayed
 * @param tokensRequested   prompt tokens of every request
 * @param tokensFromCache   tokens served from cache (a match's blocks, capped at the prompt)
 * @param blocksReferenced  block references of every request
 * @param blocksRestored    blocks served from cache
 * @param requestsHit       requests that restored something
 * @param published         publications sent
 * @param stored            publications stored
 * @param present           publications that found their record held
 * @param abandoned         publications that found no room
 * @param evicted           records dropped from memory
 * @param bytesRestored     bytes copied to the device by restores
 */
public record SimulationResult(String policy, String rows, long requests, long tokensRequested, long tokensFromCache,
                               long blocksReferenced, long blocksRestored, long requestsHit, long published,
                               long stored, long present, long abandoned, long evicted, long bytesRestored) {

    /** Tokens served from cache over tokens requested. */
    public double hitRatio() {
        return tokensRequested == 0 ? 0 : (double) tokensFromCache / tokensRequested;
    }

    /** Block references served from cache over block references. */
    public double blockHitRatio() {
        return blocksReferenced == 0 ? 0 : (double) blocksRestored / blocksReferenced;
    }
}
