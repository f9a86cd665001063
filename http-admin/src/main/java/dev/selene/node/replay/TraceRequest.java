package dev.selene.node.replay;

/**
 * One request of a Mooncake-format trace (one JSON object per line).
 *
 * @param timestampMillis arrival, milliseconds from the trace's start
 * @param inputLength     prompt tokens
 * @param outputLength    generated tokens
 * @param hashIds         prefix block ids, root first; block i (of {@link MooncakeTrace#BLOCK_TOKENS} tokens) has
 *                        block i-1 as its parent
 */
public record TraceRequest(long timestampMillis, int inputLength, int outputLength, long[] hashIds) {
}
