package dev.selene.actors.value;

import dev.selene.engine.key.RecordKey;

import java.util.List;

/**
 * The match for a lookup: the records of the chain up to and including the deepest one whose whole chain
 * is present and which has a row, each with where it lives. Empty when nothing matches.
 *
 * @param records root first; {@code records.size()} is the match depth
 * @param tokens  tokens the match covers
 * @param missReason when nothing matches, a sentence saying why (e.g. "3 records of the chain cached, none carries
 *                   a row"); empty on a hit
 */
public record LookupResult(List<Located> records, long tokens, String missReason) {

    /** One chain record and the tier it will be restored from. */
    public record Located(RecordKey key, boolean hasRow, Tier tier) {
    }

    public static LookupResult none() {
        return new LookupResult(List.of(), 0, "nothing is cached");
    }

    /** No match, and why. */
    public static LookupResult miss(String reason) {
        return new LookupResult(List.of(), 0, reason);
    }

    public int depth() {
        return records.size();
    }
}
