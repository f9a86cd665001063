package dev.selene.node.replay;

import dev.selene.engine.key.ChainHash;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What an unbounded cache would serve from a trace, computed exactly from it (nothing is evicted):
 * <ul>
 *   <li>{@code blockCeiling}: the share of block references that repeat a block seen before (the traces
 *       README's 64% for the synthetic trace);</li>
 *   <li>{@code tokenCeiling}: the same in tokens, per request the longest previously seen prefix, capped at the
 *       prompt: the most any cache could serve, the ceiling a replay's hit ratio is held to;</li>
 *   <li>{@code rowCeiling}: an unbounded cache that follows Selene's match rule (a match ends at a record with a
 *       row, and a replay publishes a row only at a request's last block), which shows how much of the gap to
 *       the token ceiling is the match rule rather than the cache's size.</li>
 * </ul>
 */
public record TraceCeiling(long requests, long blockReferences, long distinctBlocks, long tokensRequested,
                           double blockCeiling, double tokenCeiling, double rowCeiling) {

    /** The ceilings of {@code trace} when a row is published only at each request's last block. */
    public static TraceCeiling of(List<TraceRequest> trace) {
        return of(trace, 0);
    }

    /**
     * The ceilings of {@code trace} when the engine publishes a row at each request's last block and, when
     * {@code rowInterval > 0}, at every {@code rowInterval}-th block.
     */
    public static TraceCeiling of(List<TraceRequest> trace, int rowInterval) {
        Set<Long> seen = new HashSet<>();
        Map<Long, Boolean> hasRow = new HashMap<>();
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
            for (int i = 0; i < seenPrefix; i++) {
                if (hasRow.getOrDefault(chain[i], false)) {
                    rowMatch = i + 1;
                }
            }
            anyPrefixTokens += Math.min((long) seenPrefix * MooncakeTrace.BLOCK_TOKENS, r.inputLength());
            rowTokens += Math.min((long) rowMatch * MooncakeTrace.BLOCK_TOKENS, r.inputLength());
            for (int i = 0; i < chain.length; i++) {
                if (seen.add(chain[i])) {
                    hasRow.put(chain[i], TraceReplay.hasRow(i, chain.length, rowInterval));
                } else {
                    repeats++;
                }
            }
        }
        return new TraceCeiling(trace.size(), refs, seen.size(), requested,
                refs == 0 ? 0 : (double) repeats / refs,
                requested == 0 ? 0 : (double) anyPrefixTokens / requested,
                requested == 0 ? 0 : (double) rowTokens / requested);
    }
}
