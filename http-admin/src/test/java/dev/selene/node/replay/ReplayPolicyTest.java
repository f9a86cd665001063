package dev.selene.node.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.node.cli.SeleneMain;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reuse policy in a real node: the node and the simulator give the same hit ratio on a short trace. */
class ReplayPolicyTest {

    @Test
    void underTheReusePolicy_theNodeAndTheSimulatorAgree() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream saved = System.out;
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            code = SeleneMain.execute("replay", ReplayTest.TRACE.toString(), "--warm", "256m", "--policy", "reuse",
                    "--no-progress", "--json");
        } finally {
            System.setOut(saved);
        }
        assertEquals(0, code);
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        JsonNode r = new ObjectMapper().readTree(lines.getLast());
        assertEquals("reuse", r.get("policy").asText());
        assertTrue(r.get("hit_ratio").asDouble() > 0, r.toString());
        assertEquals(r.get("simulated_hit_ratio").asDouble(), r.get("hit_ratio").asDouble(), 0.0, r.toString());
    }
}
