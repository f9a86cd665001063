package dev.selene.engine.trace;

import dev.selene.engine.key.ChainHash;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What an unbounded cache would serve from a trace, computed exactly from it (nothing is evicted):
 * <ul>
 *   <li>{@code blockCeiling}: the share of block references that repeat a block seen before;</li>
 *   <li>{@code tokenCeiling}: the same in tokens, per request the longest previously seen prefix, capped at the
 *       prompt: the most any cache could serve;</li>
 *   <li>{@code rowCeiling}: an unbounded cache that follows Selene's match rule (a match ends at a record with a
 *       row) under a {@link RowRule}; a record held without a row takes the row a later publication at the same key
 *       carries, as a memory-only node does. It is the ceiling a replay's hit ratio is held to.</li>
 * </ul>
 */
public record TraceCeiling(long requests, long blockReferences, long distinctBlocks, long tokensRequested,
                           double blockCeiling, double tokenCeiling, double rowCeiling) {

    /** The ceilings of {@code trace} when the engine places rows by {@code rows}. */
    public static TraceCeiling of(List<TraceRequest> trace, RowRule rows) {
        Set<Long> seen = new HashSet<>();
        Map<Long, Boolean> published = new HashMap<>();
        long refs = 0;
        long repeats = 0;
        long requested = 0;
        long anyPrefixTokens = 0;
        long rowTokens = 0;
        for (TraceRequest r : trace) {
            long[] chain = ChainHash.chain(r.hashIds());
            refs += chain.length;
            requested += r.inputLength();
            int seenPrefix = 0;
            while (seenPrefix < chain.length && seen.contains(chain[seenPrefix])) {
                seenPrefix++;
            }
            int rowMatch = 0;
            for (int i = 0; i < chain.length && published.containsKey(chain[i]); i++) {
                if (published.get(chain[i])) {
                    rowMatch = i + 1;
                }
            }
            anyPrefixTokens += Math.min((long) seenPrefix * TraceRequest.BLOCK_TOKENS, r.inputLength());
            rowTokens += Math.min((long) rowMatch * TraceRequest.BLOCK_TOKENS, r.inputLength());
            for (long key : chain) {
                if (!seen.add(key)) {
                    repeats++;
                }
            }
            int n = rows.published(r);
            for (int i = 0; i < n; i++) {
                published.merge(chain[i], rows.hasRow(r, i), Boolean::logicalOr);
            }
        }
        return new TraceCeiling(trace.size(), refs, seen.size(), requested,
                refs == 0 ? 0 : (double) repeats / refs,
                requested == 0 ? 0 : (double) anyPrefixTokens / requested,
                requested == 0 ? 0 : (double) rowTokens / requested);
    }
}
