package dev.selene.actors.value;

/**
 * The answer to an operator's eviction of one record (with its descendants).
 *
 * @param result  what happened
 * @param records records removed (the record and its resident descendants)
 */
public record EvictOutcome(Result result, int records) {

    /** The kinds of answer. */
    public enum Result {
        /** The record and its descendants were removed. */
        EVICTED,
        /** No such record is resident. */
        NOT_FOUND,
        /** The record or a descendant is pinned by a restore or being published; try again later. */
        BUSY
    }
}
