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
 * @param bytesRestored     bytes copied to the device by restores, from either tier
 * @param tokensFromDisk    tokens served from records the restore read from disk (0 without a disk tier)
 * @param bytesFromDisk     bytes of {@code bytesRestored} read from disk
 * @param restoresFromMemory restores that copied at least one record from memory
 * @param restoresFromDisk  restores that read at least one record from disk
 * @param restoresRefused   restores refused as slower than recomputing (their disk part's read estimate)
 * @param spilled           records written to disk
 * @param evictedFromDisk   record files deleted from disk to make room
 * @param rowsAdded         rows published at records held without one, joined to their pages (memory only)
 * @param rowsDropped       rows dropped from memory while their record's pages stayed (memory only)
 * @param rowsHeldBack      rows the policy decided to hold back from dropping for their conversation's next turn
 */
public record SimulationResult(String policy, String rows, long requests, long tokensRequested, long tokensFromCache,
                               long blocksReferenced, long blocksRestored, long requestsHit, long published,
                               long stored, long present, long abandoned, long evicted, long bytesRestored,
                               long tokensFromDisk, long bytesFromDisk, long restoresFromMemory,
                               long restoresFromDisk, long restoresRefused,
                               long spilled, long evictedFromDisk, long rowsAdded, long rowsDropped,
                               long rowsHeldBack) {

    /** Tokens served from cache over tokens requested. */
    public double hitRatio() {
        return tokensRequested == 0 ? 0 : (double) tokensFromCache / tokensRequested;
    }

    /** Tokens served from disk over tokens requested. */
    public double diskHitRatio() {
        return tokensRequested == 0 ? 0 : (double) tokensFromDisk / tokensRequested;
    }

    /** Block references served from cache over block references. */
    public double blockHitRatio() {
        return blocksReferenced == 0 ? 0 : (double) blocksRestored / blocksReferenced;
    }
}
