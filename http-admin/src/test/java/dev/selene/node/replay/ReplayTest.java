package dev.selene.node.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.node.cli.SeleneMain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code selene replay} on the first 200 requests of the Mooncake synthetic trace, and its ceiling arithmetic. */
class ReplayTest {

    static final Path TRACE = Path.of("src", "test", "resources", "mooncake-first-200.jsonl");

    private static TraceRequest req(int input, long... ids) {
        return new TraceRequest(0, input, 1, ids);
    }

    @Test
    void ceiling_countsRepeatedBlocks_andTheRowAwareMatch() {
        List<TraceRequest> trace = List.of(req(1536, 1, 2, 3), req(2048, 1, 2, 3, 4), req(1024, 1, 2), req(512, 9));
        TraceCeiling c = TraceCeiling.of(trace);
        assertEquals(10, c.blockReferences());
        assertEquals(5, c.distinctBlocks());
        assertEquals(0.5, c.blockCeiling(), 1e-9);
        // Seen prefixes: 0, 3 blocks (1536 tokens), 2 blocks (1024), 0 of 5120 requested tokens.
        assertEquals((1536 + 1024) / 5120.0, c.tokenCeiling(), 1e-9);
        // Rows at last blocks only: the second request matches up to block 3 (a row), the third matches nothing.
        assertEquals(1536 / 5120.0, c.rowCeiling(), 1e-9);
        assertEquals((1536 + 1024) / 5120.0, TraceCeiling.of(trace, 1).rowCeiling(), 1e-9);
    }

    @Test
    void aMalformedLine_isRefusedWithItsLineNumber(@TempDir Path dir) throws IOException {
        Path bad = Files.writeString(dir.resolve("bad.jsonl"), "{\"timestamp\": 0, \"input_length\": 5, \"hash_ids\": [1]}\n"
                + "{\"timestamp\": 1, \"hash_ids\": \"nope\"}\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MooncakeTrace.read(bad, 0));
        assertTrue(e.getMessage().contains("line 2"), e.getMessage());
        assertEquals(1, MooncakeTrace.read(bad, 1).size());
    }

    @Test
    void replay_reportsAHitRatioBetweenZeroAndTheUnboundedCeiling() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream saved = System.out;
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            code = SeleneMain.execute("replay", TRACE.toString(), "--warm", "512m", "--row-interval", "4",
                    "--no-progress", "--json");
        } finally {
            System.setOut(saved);
        }
        assertEquals(0, code);
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        JsonNode r = new ObjectMapper().readTree(lines.getLast());
        assertEquals(200, r.get("requests").asInt());
        double hit = r.get("hit_ratio").asDouble();
        double ceiling = r.get("ceiling_unbounded").asDouble();
        assertTrue(hit > 0, "some requests hit: " + r);
        assertTrue(hit <= ceiling, "hit ratio " + hit + " above the unbounded ceiling " + ceiling);
        assertTrue(r.get("restores_memory").asInt() > 0);
        assertEquals(r.get("requests").asInt(), r.get("requests_hit").asInt() + r.get("requests_recomputed").asInt());
        assertTrue(r.get("stored").asInt() > 0);
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("ceiling, unbounded cache")));
    }
}
