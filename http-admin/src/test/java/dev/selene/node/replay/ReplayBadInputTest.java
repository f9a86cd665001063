package dev.selene.node.replay;

import dev.selene.engine.trace.TraceRequest;
import dev.selene.node.cli.InProcess;
import dev.selene.node.cli.InProcess.Run;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code selene replay} on bad input: each is refused with one line on standard error and exit code 2, before
 * anything else is printed, in plain words (never a parser's message or a stack trace), and leaves nothing behind.
 */
class ReplayBadInputTest {

    private static final String GOOD = "{\"timestamp\": 0, \"input_length\": 600, \"hash_ids\": [1, 2]}\n";

    /** {@code selene replay args... --no-progress} in this JVM. */
    private static Run run(String... args) {
        List<String> all = new ArrayList<>(List.of("replay"));
        all.addAll(List.of(args));
        all.add("--no-progress");
        return InProcess.selene(all.toArray(String[]::new));
    }

    /** Refused as a usage error: exit 2 and one line on standard error, its only output, holding {@code text}. */
    private static String assertOneLineError(Run r, String text) {
        assertEquals(2, r.exit(), r.err());
        assertEquals("", r.out(), "nothing on standard output");
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), "one line, nothing before it: " + r.err());
        String line = lines.getFirst();
        assertTrue(line.startsWith("selene: "), line);
        assertTrue(line.contains(text), "'" + text + "' in: " + line);
        for (String internal : List.of("Exception", "\tat ", "Source:", "StreamReadFeature", "marker", "REDACTED")) {
            assertFalse(line.contains(internal), "no '" + internal + "' in: " + line);
        }
        return line;
    }

    private static Path trace(Path dir) throws IOException {
        return Files.writeString(dir.resolve("t.jsonl"), GOOD + GOOD);
    }

    private static List<Path> entries(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.toList();
        }
    }

    @Test
    void aDiskDirThatIsAFile_isRefusedAsNotADirectory(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("afile"), "x");
        assertOneLineError(run(trace(dir).toString(), "--disk-dir", file.toString()),
                "--disk-dir = '" + file + "' is invalid: not a directory; allowed: a writable directory");
        assertEquals("x", Files.readString(file));
    }

    @Test
    void aMissingDiskDir_isRefused_andNotCreated(@TempDir Path dir) throws IOException {
        Path missing = dir.resolve("no").resolve("such");
        assertOneLineError(run(trace(dir).toString(), "--disk-dir", missing.toString()), "--disk-dir = '" + missing
                + "' is invalid: no such directory; allowed: an existing writable directory");
        assertFalse(Files.exists(dir.resolve("no")), "nothing was created");
    }

    /** Directories no process may make a directory in, even a superuser's: /proc and /sys (Linux). */
    @Test
    void aDiskDirThatTakesNoNewDirectory_isRefusedWithTheReason(@TempDir Path dir) throws IOException {
        for (String system : List.of("/proc/1", "/sys/kernel")) {
            assumeTrue(Files.isDirectory(Path.of(system)), system + " exists on Linux only");
            String line = assertOneLineError(run(trace(dir).toString(), "--disk-dir", system),
                    "--disk-dir = '" + system + "' is invalid: ");
            assertTrue(line.matches(".*is invalid: (not writable|cannot write a file in it \\(.+\\)); allowed: a "
                    + "writable directory"), line);
        }
    }

    @Test
    void aLayoutNamedInCapitals_isTaken_asServeAndBurstTakeIt(@TempDir Path dir) throws IOException {
        Run r = run(trace(dir).toString(), "--layout", "QWEN-TP1", "--simulate");
        assertEquals(0, r.exit(), r.err());
    }

    @Test
    void aByteOrderMarkBeforeTheFirstLine_isRead_asEditorsWriteIt(@TempDir Path dir) throws IOException {
        Path bom = dir.resolve("bom.jsonl");
        Files.write(bom, ("\uFEFF" + GOOD + GOOD).getBytes(StandardCharsets.UTF_8));
        assertEquals(2, dev.selene.node.replay.MooncakeTrace.read(bom, 0).size());
        Path inside = Files.writeString(dir.resolve("inside.jsonl"), GOOD + "\uFEFF" + GOOD);
        assertOneLineError(run(inside.toString()), "line 2 is malformed");
    }

    @Test
    void aDiskSmallerThanOneRecord_isRefused_notReplayedWithoutTheDiskAskedFor(@TempDir Path dir) throws IOException {
        Path disk = Files.createDirectory(dir.resolve("disk"));
        assertOneLineError(run(trace(dir).toString(), "--disk-dir", disk.toString(), "--disk-size", "0"),
                "--disk-size '0' is invalid; allowed: at least one record of the layout (");
        assertEquals(List.of(), entries(disk));
    }

    @Test
    void aReplayRefusedAfterItsDiskDirIsChecked_leavesNothingInIt(@TempDir Path dir) throws IOException {
        Path disk = Files.createDirectory(dir.resolve("disk"));
        Run r = run(trace(dir).toString(), "--disk-dir", disk.toString(), "--prefill-tokens-per-s", "0");
        assertEquals(2, r.exit(), r.err());
        assertEquals(List.of(), entries(disk));
    }

    @Test
    void aLineThatIsNotValidJson_isRefusedWithItsLineInPlainWords(@TempDir Path dir) throws IOException {
        Path cut = Files.writeString(dir.resolve("cut.jsonl"), GOOD + GOOD + GOOD
                + "{\"timestamp\": 5, \"input_length\": 10, \"hash_ids\": [1, 2\n" + GOOD);
        assertOneLineError(run(cut.toString()),
                "trace '" + cut + "' line 4 is malformed: not valid JSON: the line ends inside an array");
        Path stray = Files.writeString(dir.resolve("stray.jsonl"), GOOD + "{\"timestamp\": 5, x}\n");
        assertOneLineError(run(stray.toString()),
                "trace '" + stray + "' line 2 is malformed: not valid JSON at column 18 ('x')");
        Path text = Files.writeString(dir.resolve("text.jsonl"), GOOD + "{\"timestamp\": 5, \"a\": \"open\n");
        assertOneLineError(run(text.toString()), "line 2 is malformed: not valid JSON: the line ends inside a string");
    }

    @Test
    void aFieldTwiceOnALine_isRefused_notReadAsItsLastValue(@TempDir Path dir) throws IOException {
        Path twice = Files.writeString(dir.resolve("twice.jsonl"), GOOD
                + "{\"timestamp\": 0, \"input_length\": 600, \"input_length\": 9, \"hash_ids\": [1]}\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MooncakeTrace.read(twice, 0));
        assertEquals("trace '" + twice + "' line 2 is malformed: the field 'input_length' appears twice",
                e.getMessage());
    }

    @Test
    void aLineNestedDeeperThanAnyTraceIs_isRefusedInPlainWords(@TempDir Path dir) throws IOException {
        Path deep = Files.writeString(dir.resolve("deep.jsonl"), GOOD + "[".repeat(100_000) + "\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MooncakeTrace.read(deep, 0));
        assertTrue(e.getMessage().startsWith("trace '" + deep + "' line 2 is malformed: arrays or objects nested too "
                + "deeply"), e.getMessage());
    }

    @Test
    void aLineWithMoreThanOneObject_isRefused_notReadAsItsFirst(@TempDir Path dir) throws IOException {
        Path two = Files.writeString(dir.resolve("two.jsonl"), GOOD + GOOD.strip() + " " + GOOD);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MooncakeTrace.read(two, 0));
        assertEquals("trace '" + two + "' line 2 is malformed: not valid JSON: more than one value on the line (the "
                + "second at column " + (GOOD.strip().length() + 2) + ")", e.getMessage());
    }

    @Test
    void aLineThatIsNotUtf8_isRefusedWithItsLine(@TempDir Path dir) throws IOException {
        // Enough lines before it that a reader reading ahead would have met the bad byte lines earlier.
        StringBuilder before = new StringBuilder();
        for (int i = 0; i < 500; i++) {
            before.append("{\"timestamp\": ").append(i).append(", \"input_length\": 600, \"hash_ids\": [1, 2], "
                    + "\"note\": \"caf\u00e9\"}\n");
        }
        byte[] head = before.toString().getBytes(StandardCharsets.UTF_8);
        byte[] bad = "{\"timestamp\": 9, \"input_length\": 6, \"hash_ids\": [1], \"note\": \"caf\u00e9\"}\n"
                .getBytes(StandardCharsets.ISO_8859_1);
        Path latin1 = dir.resolve("latin1.jsonl");
        Files.write(latin1, head);
        Files.write(latin1, bad, java.nio.file.StandardOpenOption.APPEND);
        String column = Integer.toString(bad.length - 3); // the é, before the closing quote, brace and line break
        assertOneLineError(run(latin1.toString()),
                "trace '" + latin1 + "' line 501 is malformed: not UTF-8 text (byte " + column + " of the line)");
        List<TraceRequest> read = MooncakeTrace.read(latin1, 500);
        assertEquals(500, read.size(), "the UTF-8 lines before it read as they are");
    }

    @Test
    void aNumberBeyondADoublesRange_isRefusedAsNotAWholeNumber(@TempDir Path dir) throws IOException {
        for (String line : List.of("{\"timestamp\": 1e400, \"input_length\": 5, \"hash_ids\": [1]}",
                "{\"timestamp\": 1, \"input_length\": 5, \"hash_ids\": [-1e400]}")) {
            Path bad = Files.writeString(dir.resolve("bad.jsonl"), GOOD + line + "\n");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> MooncakeTrace.read(bad, 0), line);
            assertTrue(e.getMessage().matches("trace '.*' line 2 is malformed: (timestamp and input_length must be "
                    + "non-negative whole numbers.*|hash_ids\\[0] is not a whole number that fits 64 bits)"),
                    e.getMessage());
        }
    }

    @Test
    void aSaveThatCannotBeWritten_saysWhy(@TempDir Path dir) {
        Path save = dir.resolve("missing").resolve("x.jsonl");
        assertOneLineError(run("--generate", "short-chats", "--requests", "5", "--simulate", "--save", save.toString()),
                "trace '" + save + "' cannot be written: no such file or directory");
    }

    @Test
    void optionsThatDoNotApply_areRefused_notIgnored(@TempDir Path dir) throws IOException {
        String t = trace(dir).toString();
        assertOneLineError(run(t, "--simulate", "--requests", "10"),
                "--requests sizes a generated trace; give --generate SHAPE or --compare with it");
        assertOneLineError(run(t, "--simulate", "--seed", "5"),
                "--seed sizes a generated trace; give --generate SHAPE or --compare with it");
        assertOneLineError(run(t, "--simulate", "--speedup", "2"),
                "--speedup applies to a node; the simulator (--simulate, or --policy oracle) runs none");
        assertOneLineError(run(t, "--policy", "oracle", "--device", "cuda"),
                "--device applies to a node; the simulator (--simulate, or --policy oracle) runs none");
        assertOneLineError(run(t, "--simulate", "--disk-dir", dir.toString()),
                "--disk-dir applies to a node; the simulator (--simulate, or --policy oracle) runs none (--disk-size "
                        + "gives it a simulated disk tier)");
        assertOneLineError(run("--compare", "--policy", "lru"),
                "--policy does not apply to --compare, which runs every policy");
    }

    @Test
    void aSaveWithoutAGeneratedTrace_isRefused_notIgnored(@TempDir Path dir) throws IOException {
        Path save = dir.resolve("x.jsonl");
        assertOneLineError(run(trace(dir).toString(), "--simulate", "--save", save.toString()),
                "--save writes a generated trace; give --generate SHAPE with it");
        assertFalse(Files.exists(save));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--limit|-1|--limit -1 is invalid; allowed: 0 (all requests) or a positive number of requests",
            "--prefill-tokens-per-s|0|--prefill-tokens-per-s 0 is invalid; allowed: a positive, finite number",
            "--prefill-tokens-per-s|-5.5|--prefill-tokens-per-s -5.5 is invalid; allowed: a positive, finite number",
            "--concurrency|0|--concurrency 0 is invalid; allowed: 1..65536",
            "--requests|0|--requests 0 is invalid; allowed: a positive number of requests"})
    void aNumberOutOfRange_isOneLineNamingItsFlagAndWhatIsAllowed(String flag, String value, String expected,
                                                                   @TempDir Path dir) throws IOException {
        assertOneLineError(run(trace(dir).toString(), "--simulate", flag, value), expected);
        if (!flag.equals("--prefill-tokens-per-s")) {
            assertOneLineError(run("--compare", flag, value), expected);
        }
    }

    @Test
    void aLayoutWhoseRecordsAreNotABlock_isTheOnlyOutput_namingTheLayoutsAllowed(@TempDir Path dir)
            throws IOException {
        for (String engine : List.of("--simulate", "--settle-writes")) {
            Path disk = Files.createDirectories(dir.resolve("disk"));
            assertOneLineError(run(trace(dir).toString(), "--layout", "small", engine, "--disk-dir", disk.toString()),
                    "--layout 'small' is invalid: its records cover 32 tokens, a trace's blocks 512; allowed: "
                            + "deepseek-tp4, qwen-tp1");
            assertEquals(List.of(), entries(disk));
        }
        assertOneLineError(run(trace(dir).toString(), "--layout", "nope"),
                "--layout 'nope' is unknown; allowed: deepseek-tp4, qwen-tp1");
    }

    @Test
    void aWarmTierThisMachineCannotMap_isTheOnlyOutput(@TempDir Path dir) throws IOException {
        assertOneLineError(run(trace(dir).toString(), "--warm", "10t"), "--warm = '10t' is invalid: the node maps ");
        assertOneLineError(run(trace(dir).toString(), "--warm", "1000t"), "--warm = '1000t' is invalid: ");
    }
}
