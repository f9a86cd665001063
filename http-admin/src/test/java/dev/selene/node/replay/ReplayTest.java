package dev.selene.node.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.engine.simulator.PolicyComparison;
import dev.selene.engine.trace.TraceRequest;
import dev.selene.engine.trace.TraceShapes;
import dev.selene.node.cli.SeleneMain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code selene replay} on the first 200 requests of the Mooncake synthetic trace and on generated traces. */
class ReplayTest {

    static final Path TRACE = Path.of("src", "test", "resources", "mooncake-first-200.jsonl");

    /** Runs {@code selene replay ARGS --no-progress --json} and returns its JSON report. */
    static JsonNode replay(String... args) throws IOException {
        List<String> all = new ArrayList<>(List.of("replay"));
        all.addAll(List.of(args));
        all.addAll(List.of("--no-progress", "--json"));
        List<String> lines = succeeding(all.toArray(String[]::new));
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("ceiling, unbounded cache")), "the table comes first");
        // issue 26: the report ended without a verdict
        assertTrue(lines.get(lines.size() - 2).matches("verdict: (OK|NOT MET): [\\d.]+% of tokens from cache.*"),
                "a verdict closes the table: " + lines.get(lines.size() - 2));
        return new ObjectMapper().readTree(lines.getLast());
    }

    /** Runs {@code selene ARGS}, checks that it exits 0, and returns the lines it printed on standard output. */
    static List<String> succeeding(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream saved = System.out;
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            code = SeleneMain.execute(args);
        } finally {
            System.setOut(saved);
        }
        assertEquals(0, code, out.toString(StandardCharsets.UTF_8));
        return out.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void theHelp_namesEveryShapeTheGeneratorKnows() {
        String help = new CommandLine(new ReplayCommand()).getUsageMessage().replaceAll("\\s+", " ");
        for (String shape : TraceShapes.NAMES) {
            assertTrue(help.contains(shape), "--generate's help leaves out " + shape + ": " + help);
        }
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
    void numbersThatAreNotWholeOrDoNotFit_areRefusedWithTheirLine_notRoundedOrWrapped(@TempDir Path dir)
            throws IOException {
        String good = "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": [1]}\n";
        for (String line : List.of("{\"timestamp\": 1e300, \"input_length\": 5, \"hash_ids\": [1]}",
                "{\"timestamp\": 3.5, \"input_length\": 5, \"hash_ids\": [1]}",
                "{\"timestamp\": 1, \"input_length\": 100000000000, \"hash_ids\": [1]}",
                "{\"timestamp\": 1, \"input_length\": 5, \"output_length\": -1, \"hash_ids\": [1]}",
                "{\"timestamp\": 1, \"input_length\": 5, \"hash_ids\": [1.5]}")) {
            Path bad = Files.writeString(dir.resolve("bad.jsonl"), good + line + "\n");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MooncakeTrace.read(bad, 0),
                    line);
            assertTrue(e.getMessage().contains("line 2 is malformed"), e.getMessage());
        }
        Path whole = Files.writeString(dir.resolve("whole.jsonl"), good
                + "{\"timestamp\": 2.0, \"input_length\": 1.2e3, \"output_length\": null, \"hash_ids\": [7.0]}\n");
        TraceRequest read = MooncakeTrace.read(whole, 0).get(1);
        assertEquals(2, read.timestampMillis());
        assertEquals(1200, read.inputLength());
        assertEquals(0, read.outputLength());
        assertEquals(7, read.hashIds()[0]);
    }

    @Test
    void aWrittenTrace_readsBackTheSame(@TempDir Path dir) {
        List<TraceRequest> trace = TraceShapes.generate("system-prompts", 2, 50);
        Path file = dir.resolve("t.jsonl");
        MooncakeTrace.write(file, trace);
        List<TraceRequest> back = MooncakeTrace.read(file, 0);
        assertEquals(trace.size(), back.size());
        for (Iterator<TraceRequest> a = trace.iterator(), b = back.iterator(); a.hasNext(); ) {
            TraceRequest x = a.next();
            TraceRequest y = b.next();
            assertEquals(x.timestampMillis(), y.timestampMillis());
            assertEquals(x.inputLength(), y.inputLength());
            assertArrayEquals(x.hashIds(), y.hashIds());
        }
    }

    @Test
    void theNode_andTheSimulator_giveTheSameHitRatio_andTheReportNamesPolicyAndRows() throws IOException {
        JsonNode r = replay(TRACE.toString(), "--warm", "256m");
        assertEquals("node", r.get("engine").asText());
        assertEquals("worth", r.get("policy").asText(), "the default");
        assertEquals("last-full", r.get("rows").asText());
        assertEquals(200, r.get("requests").asInt());
        double hit = r.get("hit_ratio").asDouble();
        assertTrue(hit > 0, "some requests hit: " + r);
        assertTrue(r.get("evicted") == null || r.get("evicted").isNull(), "the node does not report evictions");
        assertEquals(hit, r.get("simulated_hit_ratio").asDouble(), 0.0, "simulator and node: " + r);
        assertTrue(hit <= r.get("oracle_hit_ratio").asDouble(), "the oracle bounds the default policy here: " + r);
        assertTrue(r.get("oracle_hit_ratio").asDouble() <= r.get("ceiling_unbounded_rows").asDouble(), r.toString());
        assertEquals(hit, r.get("hit_ratio_memory").asDouble(), 1e-4);
        assertTrue(r.get("seconds_saved").asDouble() > 0);
        assertTrue(r.get("restores_memory").asInt() > 0);
        assertEquals(r.get("requests").asInt(), r.get("requests_hit").asInt() + r.get("requests_recomputed").asInt());
        assertTrue(r.get("stored").asInt() > 0);
    }

    @Test
    void lastFullRows_serveMore_thanRowsAtThePartialLastBlock() throws IOException {
        JsonNode lastFull = replay(TRACE.toString(), "--simulate", "--warm", "1g");
        JsonNode last = replay(TRACE.toString(), "--simulate", "--warm", "1g", "--rows", "last");
        assertEquals("simulator", lastFull.get("engine").asText());
        assertEquals("last", last.get("rows").asText());
        assertTrue(lastFull.get("ceiling_unbounded_rows").asDouble() > last.get("ceiling_unbounded_rows").asDouble());
        assertTrue(lastFull.get("hit_ratio").asDouble() > last.get("hit_ratio").asDouble());
    }

    @Test
    void theOraclePolicy_runsInTheSimulator_andServesAtLeastEveryPolicy() throws IOException {
        JsonNode oracle = replay("--generate", "agent-loops", "--requests", "400", "--policy", "oracle",
                "--warm", "256m");
        assertEquals("simulator", oracle.get("engine").asText());
        assertEquals("oracle", oracle.get("policy").asText());
        for (String policy : List.of("lru", "reuse", "worth")) {
            JsonNode r = replay("--generate", "agent-loops", "--requests", "400", "--policy", policy, "--simulate",
                    "--warm", "256m");
            assertTrue(r.get("hit_ratio").asDouble() <= oracle.get("hit_ratio").asDouble(), policy + ": " + r);
            assertEquals(oracle.get("hit_ratio").asDouble(), r.get("oracle_hit_ratio").asDouble(), 0.0);
        }
    }

    @Test
    void aReplayWithADiskTier_restoresFromDisk_andSplitsItsHitsByTier(@TempDir Path dir) throws IOException {
        JsonNode r = replay("--generate", "short-chats", "--requests", "300", "--warm", "16m", "--concurrency", "1",
                "--disk-dir", dir.toString(), "--disk-size", "1g");
        assertTrue(r.get("restores_disk").asInt() > 0, "some restores read the disk: " + r);
        assertTrue(r.get("hit_ratio_disk").asDouble() > 0, r.toString());
        assertEquals(r.get("hit_ratio").asDouble(),
                r.get("hit_ratio_memory").asDouble() + r.get("hit_ratio_disk").asDouble(), 2e-4);
        try (var left = Files.list(dir)) {
            assertEquals(0, left.count(), "the replay's disk directory is gone");
        }
        assertEquals(1L << 30, r.get("disk_run_bytes").asLong(), "the disk held the tier asked for: " + r);
        assertEquals(0, r.get("disk_full").asLong());
    }

    @Test
    void aDiskTierLargerThanItsDisk_isReportedAtTheSizeItRan_andTheVerdictSaysSo(@TempDir Path dir) {
        List<String> lines = succeeding("replay", "--generate", "short-chats", "--requests", "100", "--warm", "16m",
                "--concurrency", "1", "--disk-dir", dir.toString(), "--disk-size", "100000g", "--no-progress",
                "--json");
        JsonNode r;
        try {
            r = new ObjectMapper().readTree(lines.getLast());
        } catch (IOException e) {
            throw new AssertionError(lines.getLast(), e);
        }
        long ran = r.get("disk_run_bytes").asLong();
        assertTrue(ran > 0 && ran < r.get("disk_bytes").asLong(), "ran at what the disk holds: " + r);
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("disk tier, as it ran")), String.join("\n", lines));
        String verdict = lines.get(lines.size() - 2);
        assertTrue(verdict.startsWith("verdict: NOT MET: ") && verdict.endsWith(" asked for"), verdict);
    }

    /**
     * The simulator with a disk tier against a real node with a real disk tier on a temporary directory, on a trace
     * where both tiers fill up (memory drops records, the disk deletes files for room). They cannot agree exactly:
     * the node's writes run while it goes on and commit in the order the disk finishes them, so which records are
     * clean when memory needs room, and the order files enter the disk's recency list, vary from run to run (two
     * node replays of this trace differ by up to a few tenths of a point). With {@code --settle-writes} each request
     * waits for the writes it started, as the simulator's finish before its next step; then the two agree within a
     * point of hit ratio, in all and from disk (mostly to four digits; 0.3-0.6 points apart in some runs, on a loaded
     * machine). Most of the hits come from the disk here (6.7 of 7.6 points in one run): a wrong disk model shows.
     * Under LRU: the order of clean records under the worth policy follows timing more (one run: node 7.55%,
     * simulator 6.40%), which would hide a wrong disk model in that noise.
     */
    @Test
    void withADiskTier_theNodeAndTheSimulatorAgreeWithinAPoint(@TempDir Path dir) throws IOException {
        JsonNode r = replay("--generate", "short-chats", "--requests", "400", "--warm", "64m", "--concurrency", "1",
                "--disk-dir", dir.toString(), "--disk-size", "256m", "--settle-writes", "--policy", "lru");
        assertEquals("node", r.get("engine").asText());
        assertTrue(r.get("evicted_disk").asLong() > 0, "the disk deleted files for room: " + r);
        assertTrue(r.get("restores_disk").asInt() > 0, "some restores read the disk: " + r);
        double hit = r.get("hit_ratio").asDouble();
        assertTrue(hit > 0.03, r.toString());
        assertEquals(hit, r.get("simulated_hit_ratio").asDouble(), 0.01, "simulator and node: " + r);
        assertEquals(r.get("hit_ratio_disk").asDouble(), r.get("simulated_hit_ratio_disk").asDouble(), 0.01,
                "from disk: " + r);
        assertTrue(r.get("oracle_hit_ratio").asDouble() >= r.get("oracle_memory_only_hit_ratio").asDouble(),
                "the oracle with the disk serves at least the memory-only one: " + r);
        assertTrue(hit <= r.get("oracle_hit_ratio").asDouble(), r.toString());
    }

    /**
     * The default policy's patience (rows held back for the wait after which their conversations come back) through
     * the node and the simulator: shared-prompt chats whose users answer at a regular pace, beyond memory. Whether a
     * row is held back depends on how many are held back already and on the turn above it, and how rows are ranked on
     * the duel's verdict, which records published again move; a node reaches these in another order than the
     * simulator (it makes room for a whole publication before the records arrive, and they arrive in any order). The
     * policy decides so that the order does not matter, and the two give the same hit ratio (before, the node's figure
     * moved from run to run on the first trace, 22.0-22.8% against the simulator's 22.7% with 8 in flight, and stayed
     * at 30.01% against 30.15% on the second, where the verdict moved between a publication's records). Both report
     * about the same count of rows held back: hundreds on the first trace, a few on the second (none before the
     * span's finer bands, when the duel's verdict alone beat LRU there). The count may differ by a few rows (a few
     * patience decisions still follow the order in which a node's records arrive: whether one more row may be held
     * back is measured against the rows resident, fewer in a node that made room for a whole publication first): on
     * a busy machine the node once counted 235 against the simulator's 234, with the same hit ratio; so the count is
     * held within 1% or 2 rows, the hit ratio exactly. A build whose classes' shares moved with their group's without
     * their rows being ranked again counted 241 against 238 in every run; ranked again, both count 239.
     */
    @Test
    void withPatience_theNodeAndTheSimulatorGiveTheSameHitRatio(@TempDir Path dir) throws IOException {
        record Case(double regularity, long seed, int requests, String layout, String warm, List<String> inFlight,
                    boolean holdsBack) {
        }
        for (Case c : List.of(new Case(0.2, 6, 1_500, "deepseek-tp4", "2g", List.of("1", "8"), true),
                new Case(0.4, 11, 2_000, "qwen-tp1", "1g", List.of("8"), true))) {
            Path trace = dir.resolve("regular-turns-" + c.seed() + ".jsonl");
            MooncakeTrace.write(trace, TraceShapes.generate(
                    TraceShapes.shape("shared-prompt-chat").withRegularTurns(c.regularity()), c.seed(), c.requests()));
            JsonNode lru = replay(trace.toString(), "--layout", c.layout(), "--warm", c.warm(), "--simulate",
                    "--policy", "lru");
            for (String inFlight : c.inFlight()) {
                JsonNode worth = replay(trace.toString(), "--layout", c.layout(), "--warm", c.warm(),
                        "--concurrency", inFlight);
                double hit = worth.get("hit_ratio").asDouble();
                assertEquals(hit, worth.get("simulated_hit_ratio").asDouble(), 0.0, "simulator and node: " + worth);
                long held = worth.get("rows_held_back").asLong();
                long simulated = worth.get("simulated_rows_held_back").asLong();
                assertTrue(Math.abs(held - simulated) <= Math.max(2, simulated / 100),
                        "rows held back, node " + held + " against the simulator's " + simulated + ": " + worth);
                assertEquals(c.holdsBack(), held > 0, "whether patience held rows back: " + worth);
                assertEquals(0, lru.get("rows_held_back").asLong(), "LRU holds nothing back: " + lru);
                // On the first trace, without patience the default serves about what LRU serves: every row goes just
                // before its turn.
                assertTrue(hit > lru.get("hit_ratio").asDouble() + 0.03, "the default served rows LRU loses: " + hit
                        + " vs " + lru.get("hit_ratio").asDouble());
            }
        }
    }

    @Test
    void aSimulatedDiskTier_servesFromDisk_andIsJudgedByTheOracleWithTheSameDisk() throws IOException {
        JsonNode memory = replay("--generate", "short-chats", "--requests", "300", "--warm", "16m", "--concurrency",
                "1", "--simulate");
        JsonNode r = replay("--generate", "short-chats", "--requests", "300", "--warm", "16m", "--concurrency", "1",
                "--simulate", "--disk-size", "1g");
        assertEquals("simulator", r.get("engine").asText());
        assertEquals(1L << 30, r.get("disk_bytes").asLong());
        assertTrue(r.get("spilled").asLong() > 0, r.toString());
        assertTrue(r.get("hit_ratio_disk").asDouble() > 0, r.toString());
        assertEquals(r.get("hit_ratio").asDouble(),
                r.get("hit_ratio_memory").asDouble() + r.get("hit_ratio_disk").asDouble(), 2e-4);
        assertTrue(r.get("hit_ratio").asDouble() > memory.get("hit_ratio").asDouble(), "the disk adds hits: " + r);
        assertEquals(memory.get("oracle_hit_ratio").asDouble(), r.get("oracle_memory_only_hit_ratio").asDouble(), 0.0);
        assertTrue(r.get("oracle_hit_ratio").asDouble() > r.get("oracle_memory_only_hit_ratio").asDouble(),
                "the oracle is the one with the same disk: " + r);
        assertEquals(r.get("hit_ratio").asDouble() / r.get("oracle_hit_ratio").asDouble(),
                r.get("of_oracle").asDouble(), 1e-3);
        assertTrue(r.get("seconds_saved").asDouble() > 0, r.toString());
        assertTrue(memory.get("spilled").isNull(), "no disk, no spill count: " + memory);
    }

    @Test
    void compare_printsEveryPolicyAndTheOracle_onTheFileAndTheGeneratedTraces_markingTheTunedOnes()
            throws IOException {
        List<String> lines = succeeding("replay", "--compare", TRACE.toString(), "--requests", "120", "--no-progress",
                    "--json");
        assertTrue(lines.getFirst().startsWith("| trace | layout | memory | lru | reuse | worth | oracle |"),
                lines.getFirst());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("| mooncake-first-200 | qwen-tp1 |")), "the file's rows");
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("| short-chats (tuned on) |")), "tuned on, marked");
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("| shared-prompt-chat | deepseek-tp4 |")),
                "held out, unmarked");
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("worth: worst against lru")), "the summary");
        JsonNode json = new ObjectMapper().readTree(lines.getLast());
        assertEquals("worth", json.get("default_policy").asText());
        JsonNode first = json.get("table").get(0);
        assertEquals("mooncake-first-200", first.get("trace").asText());
        assertEquals(false, first.get("tuned_on").asBoolean());
        for (String policy : List.of("lru", "reuse", "worth", "oracle")) {
            assertTrue(first.get("hit_ratio").has(policy), first.toString());
        }
    }

    @Test
    void compareOverSeeds_sumsUpEveryPolicyOverEverySeedsRows_andListsTheRowsWhereTheDefaultBreaksARule()
            throws IOException {
        List<String> lines = succeeding("replay", "--compare", "--seeds", "3-4", "--requests", "120", "--no-progress",
                    "--json");
        JsonNode json = new ObjectMapper().readTree(lines.getLast());
        JsonNode table = json.get("table");
        int perSeed = PolicyComparison.traces(null, null, 3, 120).size() * 4; // two layouts, two memory sizes each
        assertEquals(2 * perSeed, table.size(), "every generated trace of both seeds, under both layouts");
        assertEquals("seeds 3-4: " + 2 * perSeed + " rows", lines.getFirst());
        assertTrue(lines.stream().noneMatch(l -> l.startsWith("| trace |")), "no table");
        for (String policy : List.of("lru", "reuse", "worth")) {
            assertTrue(lines.stream().anyMatch(l -> l.startsWith(policy + ": mean over lru ")), policy + "'s means");
            assertTrue(lines.stream().anyMatch(l -> l.startsWith(policy + ": worst against lru ")), policy);
        }
        assertTrue(table.get(0).get("trace").asText().startsWith("seed 3, "), table.get(0).toString());
        assertTrue(table.get(table.size() - 1).get("trace").asText().startsWith("seed 4, "), "the last seed's rows");

        // The listing says as many rows as it lists, each a row of the table breaking a rule the default is held to.
        String said = lines.stream().filter(l -> l.startsWith("worth breaks a rule on ")).findFirst().orElseThrow();
        long listed = lines.stream().filter(l -> l.startsWith("  seed ")).count();
        assertEquals("worth breaks a rule on " + listed + " rows" + (listed > 0 ? ":" : ""), said);
        long expected = 0;
        for (JsonNode r : table) {
            double worth = r.get("hit_ratio").get("worth").asDouble();
            double lru = r.get("hit_ratio").get("lru").asDouble();
            double oracle = r.get("hit_ratio").get("oracle").asDouble();
            boolean held = !r.get("tuned_on").asBoolean();
            expected += (100 * (worth - lru) < -1 ? 1 : 0)
                    + (held && 100 * (oracle - lru) > 5 && worth / oracle < 0.7 ? 1 : 0);
        }
        assertEquals(expected, listed, "the rows breaking a rule, counted from the table");
    }

    @Test
    void badOptions_areOneLineNamingTheAllowedValues() {
        assertEquals(2, SeleneMain.execute("replay", "--compare", "--seeds", "9-3", "--no-progress"));
        assertEquals(2, SeleneMain.execute("replay", "--compare", "--seeds", "x", "--no-progress"));
        assertEquals(2, SeleneMain.execute("replay", TRACE.toString(), "--seeds", "3", "--no-progress"));
        assertEquals(2, SeleneMain.execute("replay", TRACE.toString(), "--policy", "fifo", "--no-progress"));
        assertEquals(2, SeleneMain.execute("replay", TRACE.toString(), "--rows", "first", "--no-progress"));
        assertEquals(2, SeleneMain.execute("replay", "--no-progress"));
        assertEquals(2, SeleneMain.execute("replay", "--compare", "--generate", "short-chats", "--no-progress"));
        assertEquals(2, SeleneMain.execute("replay", TRACE.toString(), "--disk-size", "1g", "--no-progress"));
        assertEquals(2, SeleneMain.execute("replay", TRACE.toString(), "--settle-writes", "--no-progress"));
    }
}
