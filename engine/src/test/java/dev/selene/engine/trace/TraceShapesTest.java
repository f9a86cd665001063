package dev.selene.engine.trace;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
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

    @Test
    void anUnknownShape_isRefusedNamingTheShapes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TraceShapes.generate("batch", 1, 10));
        assertTrue(e.getMessage().contains("system-prompts, short-chats, agent-loops"), e.getMessage());
    }
}
