package dev.selene.node.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.node.cli.SeleneMain;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The learning policies in a real node: the node and the simulator give the same hit ratio on a short trace. */
class ReplayPolicyTest {

    @ParameterizedTest
    @ValueSource(strings = {"reuse", "worth"})
    void underEachPolicy_theNodeAndTheSimulatorAgree(String policy) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream saved = System.out;
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            code = SeleneMain.execute("replay", ReplayTest.TRACE.toString(), "--warm", "256m", "--policy", policy,
                    "--no-progress", "--json");
        } finally {
            System.setOut(saved);
        }
        assertEquals(0, code);
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        JsonNode r = new ObjectMapper().readTree(lines.getLast());
        assertEquals(policy, r.get("policy").asText());
        assertEquals("last-full", r.get("rows").asText());
        assertTrue(r.get("hit_ratio").asDouble() > 0, r.toString());
        assertEquals(r.get("simulated_hit_ratio").asDouble(), r.get("hit_ratio").asDouble(), 0.0, r.toString());
    }
}
