package dev.selene.node.serve;

import dev.selene.node.cli.InProcess;
import dev.selene.node.cli.SeleneMain;
import dev.selene.node.config.NodeSettings;
import dev.selene.node.logging.ConsoleLogging;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The settings {@code selene serve} starts a node with (its smaller default warm tier, under a file and the flags),
 * and its log file refused before anything starts when it cannot be written.
 */
class ServeSettingsTest {

    private static NodeSettings settings(String... args) {
        ServeCommand serve = new ServeCommand();
        new CommandLine(serve).parseArgs(args);
        return serve.settings();
    }

    @Test
    void serveWithoutAFileOrAFlag_mapsA1GiBWarmTier_notTheLibrarys8GiB() {
        assertEquals(1L << 30, settings().cache().warmBytes());
        assertEquals(32, settings().cache().concurrency(), "the other defaults are the library's");
    }

    @Test
    void aFileThatSetsTheWarmTier_orTheFlag_winsOverServesDefault() {
        assertEquals(8L << 30, settings("--config", "../config/memory-only.conf").cache().warmBytes());
        assertEquals(0, settings("--config", "../config/disk-only.conf").cache().warmBytes());
        assertEquals(2L << 30, settings("--config", "../config/memory-only.conf", "--warm", "2g").cache().warmBytes());
        assertEquals(64L << 20, settings("--warm", "64m").cache().warmBytes());
    }

    /** Runs {@code selene serve args}, which must be refused with exit code 2; what it printed on standard error. */
    private static String refused(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "serve";
        System.arraycopy(args, 0, all, 1, args.length);
        InProcess.Run r = InProcess.selene(all);
        assertEquals(2, r.exit(), r.err());
        return r.err();
    }

    @Test
    void aWorkloadWhoseSnapshotsDoNotFitTheMachine_isRefusedWithOneLine(@TempDir Path tmp) {
        String out = refused("--layout", "small", "--warm", "1m", "--device", "simulated", "--admin-port", "0",
                "--log-file", tmp.resolve("s.log").toString(), "--workload", "burst:1", "--conversations", "1",
                "--tokens", "100000000");
        assertTrue(out.startsWith("selene: the burst is too large for this machine: its snapshots take "), out);
        assertEquals(1, out.strip().lines().count(), out);
        assertFalse(Files.exists(tmp.resolve("s.log")), "refused before the log file is created");
    }

    @Test
    void workloadOptionsWithoutAWorkload_orADiskSizeWithoutADisk_areRefused_notIgnored(@TempDir Path tmp) {
        String[] node = {"--layout", "small", "--warm", "1m", "--device", "simulated", "--admin-port", "0",
                "--log-file", tmp.resolve("s.log").toString()};
        for (String[] o : new String[][]{{"--conversations", "-3"}, {"--tokens", "-1"}, {"--snapshot-ms", "-1"},
                {"--turns", "3"}, {"--seed", "7"}}) {
            String[] args = java.util.stream.Stream.concat(java.util.Arrays.stream(node), java.util.Arrays.stream(o))
                    .toArray(String[]::new);
            assertEquals("selene: " + o[0] + " shapes the workload a node drives into itself: it needs --workload"
                    + System.lineSeparator(), refused(args));
        }
        String[] disk = java.util.stream.Stream.concat(java.util.Arrays.stream(node),
                java.util.stream.Stream.of("--disk-size", "5g")).toArray(String[]::new);
        assertEquals("selene: --disk-size needs a disk tier: --disk-dir, or selene.disk.dir in --config"
                + System.lineSeparator(), refused(disk));
        assertFalse(Files.exists(tmp.resolve("s.log")), "refused before the log file is made");
    }

    @Test
    void aLogFileThatCannotBeWritten_isOneLineAndExitCode2_beforeTheNodeStarts(@TempDir Path tmp) throws Exception {
        Path file = Files.writeString(tmp.resolve("afile"), "x");
        Path log = file.resolve("logs").resolve("selene.log");
        PrintStream before = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit;
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            exit = SeleneMain.execute("serve", "--layout", "small", "--warm", "1m", "--device", "simulated",
                    "--admin-port", "0", "--log-file", log.toString());
        } finally {
            System.setErr(before);
        }
        assertEquals(2, exit, err.toString(StandardCharsets.UTF_8));
        assertEquals("selene: --log-file '" + log + "' is invalid: its directory cannot be created (" + file
                + " is not a directory); allowed: a file that can be written" + System.lineSeparator(),
                err.toString(StandardCharsets.UTF_8));
        assertFalse(Files.exists(tmp.resolve("logs")));
    }

    @Test
    void aLogFileTheFileSystemRefuses_isRefused_evenWherePermissionsWouldPassItsUser() {
        // /proc takes no new file from anyone, the superuser included, whose permission checks always pass.
        Path proc = Path.of("/proc");
        assumeTrue(Files.isDirectory(proc.resolve("self")), "a Linux /proc");
        String why = ConsoleLogging.unusable(proc.resolve("selene-log-probe.log"));
        assertTrue(why != null && why.startsWith("it cannot be written ("), String.valueOf(why));
    }

    @Test
    void anEmptyLogFileName_isRefusedAsNamingNoFile_notAsTheWorkingDirectory() {
        assertEquals("no file is named", ConsoleLogging.unusable(Path.of("")));
        assertEquals("no file is named", ConsoleLogging.unusable(Path.of(" ")));
    }

    @Test
    void aLogFileThatIsAPipe_isRefused_ratherThanBlockingTheNodeUntilSomethingReadsIt(@TempDir Path tmp)
            throws Exception {
        Path fifo = tmp.resolve("log.fifo");
        Process mkfifo;
        try {
            mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        } catch (IOException e) {
            assumeTrue(false, "no mkfifo here");
            return;
        }
        assumeTrue(mkfifo.waitFor() == 0, "mkfifo made a pipe");
        assertEquals("it is not a regular file", ConsoleLogging.unusable(fifo));
    }
}
