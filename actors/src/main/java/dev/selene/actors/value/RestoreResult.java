package dev.selene.actors.value;

import java.util.List;

/**
 * The answer to a restore: how much of the chain was copied back to the device and from where, or why not.
 *
 * @param outcome    what happened
 * @param records    chain records restored (the match depth) when restored
 * @param tokens     tokens restored
 * @param fromMemory records restored from host memory
 * @param fromDisk   records restored from disk
 * @param fromPool   records restored from the pool
 * @param bytes      bytes copied to the device
 * @param detail     a human sentence for refusals and failures, else empty
 * @param rowsLeftOut positions in the chain (from 0) of records restored without the row their target had room for,
 *                   because the cache holds none there (it dropped that row to make room and kept the record's pages
 *                   for the records below it, or the record was published without one); a resume needs only the row
 *                   where the match ends; the target's row shares there are left untouched
 */
public record RestoreResult(Outcome outcome, int records, long tokens, int fromMemory, int fromDisk, int fromPool,
                            long bytes, String detail, List<Integer> rowsLeftOut) {

    public RestoreResult {
        rowsLeftOut = List.copyOf(rowsLeftOut);
    }

    /** The kinds of answer. */
    public enum Outcome {
        /** The match was copied to the device. */
        RESTORED,
        /** Nothing of the chain is cached: recompute. */
        MISS,
        /** Restoring was estimated slower than the caller's recompute estimate (restore cost): recompute. */
        REFUSED,
        /** The cache is off. */
        DISABLED,
        /** A copy failed; nothing partial is reported as restored. */
        FAILED
    }

    public static RestoreResult of(Outcome outcome, String detail) {
        return new RestoreResult(outcome, 0, 0, 0, 0, 0, 0, detail, List.of());
    }
}
