package dev.selene.engine.trace;

import dev.selene.engine.key.ChainHash;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Seeded generators of Mooncake-format traces with shapes other than the synthetic trace's, so that an eviction
 * policy can be judged on more than one workload. The same shape, seed and size give the same trace.
 *
 * <pre>
 * A conversation's context is a list of segments (a system prompt, a user message, an answer, a tool's output),
 * each with an id and a length in tokens; a request sends the whole context so far. Block b of a request covers
 * tokens [512 b, 512 b + 512) of its context and its id hashes the pieces of segments it covers, so two contexts
 * that agree on a block's tokens get the same id, and a partial last block gets another id than the same block
 * once it is full (as Mooncake's hash ids do).
 *
 *   system-prompts  a few long system prompts (Zipf popularity), short conversations of 1-6 turns on top
 *   short-chats     many short conversations of 2-6 turns with no long shared prefix
 *   agent-loops     agents sharing a tool prompt, each running 8-40 steps that append tool output; now and then
 *                   an agent retries from an earlier step
 * </pre>
 */
public final class TraceShapes {

    /** The shapes {@link #generate} knows. */
    public static final List<String> NAMES = List.of("system-prompts", "short-chats", "agent-loops");

    private static final int BLOCK = TraceRequest.BLOCK_TOKENS;

    private TraceShapes() {
    }

    /** {@code requests} requests of {@code shape}, drawn from {@code seed}. */
    public static List<TraceRequest> generate(String shape, long seed, int requests) {
        if (requests < 1) {
            throw new IllegalArgumentException("a generated trace needs at least 1 request, was " + requests);
        }
        Shape s = switch (shape.toLowerCase(Locale.ROOT)) {
            case "system-prompts" -> new Shape(400, 8, 1, 6, 1_500, 12_000, 60, 1_200, 80, 700, 0);
            case "short-chats" -> new Shape(1000, 1, 2, 6, 300, 300, 80, 1_000, 100, 600, 0);
            case "agent-loops" -> new Shape(64, 2, 8, 40, 5_000, 7_000, 200, 4_000, 40, 300, 0.08);
            default -> throw new IllegalArgumentException("shape '" + shape + "' is unknown; allowed: "
                    + String.join(", ", NAMES));
        };
        return new Generator(s, new SplittableRandom(seed)).run(requests);
    }

    /**
     * The parameters of a shape.
     *
     * @param active       conversations in progress at once (their requests interleave)
     * @param prompts      distinct shared system prompts (chosen with Zipf popularity)
     * @param minTurns     fewest requests of a conversation
     * @param maxTurns     most requests of a conversation
     * @param minPrompt    shortest shared prompt, tokens
     * @param maxPrompt    longest shared prompt, tokens
     * @param minMessage   shortest appended message (user message or tool output), tokens
     * @param maxMessage   longest appended message, tokens
     * @param minAnswer    shortest answer, tokens
     * @param maxAnswer    longest answer, tokens
     * @param retry        chance that a request starts again from an earlier turn of its conversation
     */
    private record Shape(int active, int prompts, int minTurns, int maxTurns, int minPrompt,
                         int maxPrompt, int minMessage, int maxMessage, int minAnswer, int maxAnswer, double retry) {
    }

    /** One segment of a context: content {@code id}, {@code length} tokens. */
    private record Segment(long id, int length) {
    }

    /** A conversation in progress: its context, its turns so far and the turns it will have. */
    private static final class Conversation {
        final List<Segment> context = new ArrayList<>();
        final List<Integer> turnEnds = new ArrayList<>();
        int turnsLeft;
    }

    private static final class Generator {
        private final Shape shape;
        private final SplittableRandom random;
        private final List<Segment> prompts = new ArrayList<>();
        private final double[] promptWeights;
        private long nextId = 1;
        private long clockMillis;

        Generator(Shape shape, SplittableRandom random) {
            this.shape = shape;
            this.random = random;
            this.promptWeights = new double[shape.prompts()];
            double total = 0;
            for (int i = 0; i < shape.prompts(); i++) {
                prompts.add(new Segment(nextId++, between(shape.minPrompt(), shape.maxPrompt())));
                promptWeights[i] = 1.0 / (i + 1);
                total += promptWeights[i];
            }
            for (int i = 0; i < promptWeights.length; i++) {
                promptWeights[i] /= total;
            }
        }

        List<TraceRequest> run(int requests) {
            List<Conversation> active = new ArrayList<>();
            List<TraceRequest> out = new ArrayList<>(requests);
            while (out.size() < requests) {
                while (active.size() < shape.active()) {
                    active.add(start());
                }
                int pick = random.nextInt(active.size());
                Conversation c = active.get(pick);
                out.add(turn(c));
                if (--c.turnsLeft == 0) {
                    active.set(pick, active.getLast());
                    active.removeLast();
                }
            }
            return out;
        }

        private Conversation start() {
            Conversation c = new Conversation();
            c.turnsLeft = between(shape.minTurns(), shape.maxTurns());
            if (shape.maxPrompt() > 0) {
                c.context.add(prompts.get(zipf()));
            }
            c.turnEnds.add(c.context.size());
            return c;
        }

        /** The next request of {@code c}: its context plus a new message; the answer joins the context after. */
        private TraceRequest turn(Conversation c) {
            if (shape.retry() > 0 && c.turnEnds.size() > 2 && random.nextDouble() < shape.retry()) {
                int back = c.turnEnds.get(1 + random.nextInt(c.turnEnds.size() - 2));
                while (c.context.size() > back) {
                    c.context.removeLast();
                }
                while (c.turnEnds.getLast() > back) {
                    c.turnEnds.removeLast();
                }
            }
            c.context.add(new Segment(nextId++, between(shape.minMessage(), shape.maxMessage())));
            int input = 0;
            for (Segment s : c.context) {
                input += s.length();
            }
            long[] ids = blockIds(c.context, input);
            int answer = between(shape.minAnswer(), shape.maxAnswer());
            c.context.add(new Segment(nextId++, answer));
            c.turnEnds.add(c.context.size());
            clockMillis += 1 + (long) (-Math.log(1 - random.nextDouble()) * 200);
            return new TraceRequest(clockMillis, input, answer, ids);
        }

        /** The block ids of a context of {@code input} tokens. */
        private static long[] blockIds(List<Segment> context, int input) {
            long[] ids = new long[(input + BLOCK - 1) / BLOCK];
            int segment = 0;
            int offset = 0;
            for (int b = 0; b < ids.length; b++) {
                int end = Math.min(input, (b + 1) * BLOCK);
                long h = 17;
                int at = b * BLOCK;
                while (at < end) {
                    Segment s = context.get(segment);
                    int take = Math.min(s.length() - offset, end - at);
                    h = ChainHash.mix(h * 31 + ChainHash.mix(s.id() * 1_000_003L + offset) + take);
                    at += take;
                    offset += take;
                    if (offset == s.length()) {
                        segment++;
                        offset = 0;
                    }
                }
                ids[b] = h & Long.MAX_VALUE;
            }
            return ids;
        }

        private int zipf() {
            double u = random.nextDouble();
            for (int i = 0; i < promptWeights.length; i++) {
                u -= promptWeights[i];
                if (u < 0) {
                    return i;
                }
            }
            return promptWeights.length - 1;
        }

        private int between(int min, int max) {
            return min >= max ? min : min + random.nextInt(max - min + 1);
        }
    }
}
