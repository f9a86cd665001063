package dev.selene.engine.trace;

/**
 * One request of a Mooncake-format trace (one JSON object per line).
 *
 * @param timestampMillis arrival, milliseconds from the trace's start
 * @param inputLength     prompt tokens
 * @param outputLength    generated tokens
 * @param hashIds         prefix block ids, root first; block i (of {@link #BLOCK_TOKENS} tokens, the last one
 *                        possibly partial) has block i-1 as its parent
 */
public record TraceRequest(long timestampMillis, int inputLength, int outputLength, long[] hashIds) {

    /** Tokens per prefix block in Mooncake traces. */
    public static final int BLOCK_TOKENS = 512;

    public TraceRequest {
        if (inputLength < 0 || timestampMillis < 0) {
            throw new IllegalArgumentException("timestamp and input_length must be non-negative, were "
                    + timestampMillis + " and " + inputLength);
        }
        if (hashIds == null) {
            throw new IllegalArgumentException("hash_ids are required");
        }
    }

    /** Blocks whose 512 tokens all lie inside the prompt: the ones an engine has completed. */
    public int fullBlocks() {
        return Math.min(hashIds.length, inputLength / BLOCK_TOKENS);
    }
}
