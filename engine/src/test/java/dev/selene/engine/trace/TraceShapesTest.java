package dev.selene.engine.trace;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The generated shapes: seeded, Mooncake-like, and sharing what each shape is meant to share. */
class TraceShapesTest {

    @Test
    void theSameSeed_givesTheSameTrace_andAnotherSeedAnother() {
        List<TraceRequest> a = TraceShapes.generate("agent-loops", 5, 200);
        List<TraceRequest> b = TraceShapes.generate("agent-loops", 5, 200);
        assertEquals(200, a.size());
        for (int i = 0; i < a.size(); i++) {
            assertEquals(a.get(i).inputLength(), b.get(i).inputLength());
            assertArrayEquals(a.get(i).hashIds(), b.get(i).hashIds());
        }
        List<TraceRequest> other = TraceShapes.generate("agent-loops", 6, 200);
        assertNotEquals(a.stream().map(TraceRequest::inputLength).toList(),
                other.stream().map(TraceRequest::inputLength).toList());
    }

    @Test
    void theLabels_markOneRequestConversations_whoseOwnBlocksNoOtherRequestHas_atRandomAndRegularTurns() {
        TraceShapes.Shape shape = new TraceShapes.Shape(50, 2, 2, 6, 1_000, 2_000, 100, 1_000, 50, 200, 0, 1, 0, 0.5,
                4_000, 8_000);
        assertLabelsMarkOneOffDocuments(shape);
        assertLabelsMarkOneOffDocuments(shape.withRegularTurns(0.3));
        assertEquals(0, TraceShapes.generateLabelled("short-chats", 4, 200).oneOff().cardinality(),
                "a shape without one-off conversations labels none");
    }

    private static void assertLabelsMarkOneOffDocuments(TraceShapes.Shape shape) {
        TraceShapes.Labelled labelled = TraceShapes.generateLabelled(shape, 4, 400);
        List<TraceRequest> plain = labelled.requests();
        Map<Long, Integer> holders = new HashMap<>();
        for (TraceRequest r : plain) {
            for (long id : new HashSet<>(Arrays.stream(r.hashIds()).boxed().toList())) {
                holders.merge(id, 1, Integer::sum);
            }
        }
        // Half the conversations are one request, the others two to six (four on average): a fifth of the requests.
        int oneOff = labelled.oneOff().cardinality();
        assertTrue(oneOff > 40 && oneOff < 160, oneOff + " of 400 requests labelled one-off");
        for (int i = 0; i < plain.size(); i++) {
            TraceRequest r = plain.get(i);
            if (labelled.oneOff().get(i)) {
                assertEquals(1, holders.get(r.hashIds()[r.fullBlocks() - 1]),
                        "a one-off request's document is its own: request " + i);
                assertTrue(r.inputLength() >= 4_000, "a document question: request " + i);
            }
        }
    }

    @Test
    void everyRequest_hasOneIdPerStartedBlock_andArrivesInOrder() {
        for (String shape : TraceShapes.NAMES) {
            long last = -1;
            for (TraceRequest r : TraceShapes.generate(shape, 1, 300)) {
                assertEquals((r.inputLength() + TraceRequest.BLOCK_TOKENS - 1) / TraceRequest.BLOCK_TOKENS,
                        r.hashIds().length, shape);
                assertTrue(r.timestampMillis() >= last, shape);
                last = r.timestampMillis();
            }
        }
    }

    @Test
    void systemPrompts_shareTheirFirstBlocks_acrossConversations() {
        Set<Long> firstBlocks = new HashSet<>();
        for (TraceRequest r : TraceShapes.generate("system-prompts", 1, 500)) {
            firstBlocks.add(r.hashIds()[0]);
        }
        assertTrue(firstBlocks.size() <= 8, "at most one first block per system prompt: " + firstBlocks.size());
    }

    /**
     * Requests that start with one or more blocks of an earlier request: a conversation went on (with prompts shorter
     * than a block, a first block mixes the prompt with a conversation's own message, so nothing else is shared).
     */
    private static long continued(List<TraceRequest> trace) {
        Set<List<Long>> seen = new HashSet<>();
        long n = 0;
        for (TraceRequest r : trace) {
            List<Long> ids = new ArrayList<>();
            for (long id : r.hashIds()) {
                ids.add(id);
            }
            for (int end = ids.size() - 1; end > 0; end--) {
                if (seen.contains(ids.subList(0, end))) {
                    n++;
                    break;
                }
            }
            for (int end = 1; end <= ids.size(); end++) {
                seen.add(List.copyOf(ids.subList(0, end)));
            }
        }
        return n;
    }

    @Test
    void oneOffConversations_neverGoOn_andAHigherContinuation_goesOnMore() {
        TraceShapes.Shape chat = new TraceShapes.Shape(50, 1, 1, 16, 300, 300, 600, 1_000, 600, 900, 0, 1, 0.6, 0);
        assertEquals(0, continued(TraceShapes.generate(chat.withOneOff(1), 1, 500)), "every request is a one-off");
        long low = continued(TraceShapes.generate(chat.withContinuation(0.3), 1, 500));
        long high = continued(TraceShapes.generate(chat.withContinuation(0.9), 1, 500));
        assertTrue(high > low, "continuation 0.9: " + high + " requests go on, 0.3: " + low);
    }

    @Test
    void oneOffDocuments_areAsLongAsTheShapeSays_andConversationsKeepTheirShortMessages() {
        // Documents of 50,000 tokens: longer than any conversation of this shape can grow (16 turns of at most
        // 1,900 tokens), so a request of that length is a document.
        TraceShapes.Shape chat = new TraceShapes.Shape(50, 1, 2, 16, 300, 300, 600, 1_000, 600, 900, 0, 1, 0.6, 0);
        for (TraceRequest r : TraceShapes.generate(chat.withDocuments(1, 50_000, 50_000), 1, 200)) {
            assertEquals(50_300, r.inputLength(), "the prompt and a document of 50,000 tokens");
        }
        List<TraceRequest> mixed = TraceShapes.generate(chat.withDocuments(0.5, 50_000, 50_000), 1, 500);
        long documents = mixed.stream().filter(r -> r.inputLength() == 50_300).count();
        long firstTurns = mixed.stream().filter(r -> r.inputLength() >= 900 && r.inputLength() <= 1_300).count();
        assertTrue(documents > 50 && firstTurns > 20, documents + " documents, " + firstTurns
                + " first turns of conversations (the prompt and a message of 600-1,000 tokens)");
        Set<Long> documentBlocks = new HashSet<>();
        mixed.stream().filter(r -> r.inputLength() == 50_300).forEach(r -> {
            for (long id : r.hashIds()) {
                documentBlocks.add(id);
            }
        });
        assertTrue(mixed.stream().filter(r -> r.inputLength() != 50_300)
                .allMatch(r -> Arrays.stream(r.hashIds()).noneMatch(documentBlocks::contains)),
                "no other request shares a block with a document: none goes on from one");
    }

    /** Requests between one turn of a conversation and its next; a conversation is its first block's id here. */
    private static List<Integer> waitsBetweenTurns(List<TraceRequest> trace) {
        Map<Long, Integer> lastTurn = new HashMap<>();
        List<Integer> waits = new ArrayList<>();
        for (int i = 0; i < trace.size(); i++) {
            Integer last = lastTurn.put(trace.get(i).hashIds()[0], i);
            if (last != null) {
                waits.add(i - last);
            }
        }
        return waits;
    }

    @Test
    void regularTurns_comeAfterWaitsNearTheMean_whereRandomPicksSpreadThemWidely() {
        // A prompt of 300 tokens and messages of 600 or more: a conversation's first block is its own.
        TraceShapes.Shape chat = new TraceShapes.Shape(50, 1, 2, 16, 300, 300, 600, 1_000, 600, 900, 0, 1, 0.6, 0);
        List<Integer> regular = waitsBetweenTurns(TraceShapes.generate(chat.withRegularTurns(0.2), 1, 2_000));
        List<Integer> random = waitsBetweenTurns(TraceShapes.generate(chat, 1, 2_000));
        assertTrue(regular.size() > 500 && random.size() > 500, regular.size() + " and " + random.size() + " waits");
        double regularNear = regular.stream().filter(w -> w >= 40 && w <= 90).count() / (double) regular.size();
        double randomNear = random.stream().filter(w -> w >= 40 && w <= 90).count() / (double) random.size();
        assertTrue(regularNear > 0.9, "regular turns: " + regularNear + " of the waits within 40-90 requests");
        assertTrue(randomNear < 0.5, "random picks: " + randomNear + " of the waits within 40-90 requests");
        assertThrows(IllegalArgumentException.class, () -> chat.withRegularTurns(1.5));
    }

    @Test
    void sharedPromptChat_startsMostRequestsWithOnePrompt() {
        List<TraceRequest> trace = TraceShapes.generate("shared-prompt-chat", 1, 1000);
        Map<Long, Integer> firstBlocks = new HashMap<>();
        for (TraceRequest r : trace) {
            firstBlocks.merge(r.hashIds()[0], 1, Integer::sum);
        }
        assertTrue(firstBlocks.size() <= 2, "two shared prompts: " + firstBlocks.size());
        assertTrue(firstBlocks.values().stream().mapToInt(Integer::intValue).max().orElseThrow() > 700,
                "the popular prompt starts most requests: " + firstBlocks);
    }

    @Test
    void aShape_refusesAContinuationOfOne() {
        assertThrows(IllegalArgumentException.class,
                () -> TraceShapes.shape("short-chats").withContinuation(1));
    }

    @Test
    void anUnknownShape_isRefusedNamingTheShapes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TraceShapes.generate("batch", 1, 10));
        assertTrue(e.getMessage().contains("system-prompts, short-chats, agent-loops, shared-prompt-chat"),
                e.getMessage());
    }
}
