package dev.selene.engine.key;

/**
 * The chained prefix hash: a record's key mixes its parent's key with the hash of its own block, so equal keys
 * mean equal prefixes.
 */
public final class ChainHash {

    /** The "parent" hash of a root record. */
    public static final long ROOT = 0x5E1E_5E1E_5E1E_5E1EL;

    private ChainHash() {
    }

    /** The key of the block {@code blockHash} that follows the prefix whose key is {@code parentHash}. */
    public static long next(long parentHash, long blockHash) {
        return mix(parentHash * 0x9E3779B97F4A7C15L + mix(blockHash));
    }

    /** A chain of keys for consecutive blocks, starting at a root. */
    public static long[] chain(long[] blockHashes) {
        long[] keys = new long[blockHashes.length];
        long parent = ROOT;
        for (int i = 0; i < blockHashes.length; i++) {
            parent = next(parent, blockHashes[i]);
            keys[i] = parent;
        }
        return keys;
    }

    /** SplitMix64's finaliser: a fast, well-distributed 64-bit mix. */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
