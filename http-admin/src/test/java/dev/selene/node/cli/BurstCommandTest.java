package dev.selene.node.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.PrintStream;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code selene burst} end to end on the simulated device, as a newcomer runs it, only smaller. */
class BurstCommandTest {

    private record Run(int exit, String out, String err) {
        JsonNode json() throws Exception {
            String[] lines = out.strip().split("\n");
            return new ObjectMapper().readTree(lines[lines.length - 1]);
        }
    }

    private static Run run(String... args) {
        InProcess.Run r = InProcess.selene(args);
        return new Run(r.exit(), r.out(), r.err());
    }

    @Test
    void burst_json_losesNothing_restoresEveryConversation_verifiesEveryByte() throws Exception {
        Run r = run("burst", "--layout", "small", "--conversations", "24", "--concurrency", "8", "--tokens", "256",
                "--device", "simulated", "--no-progress", "--json");
        assertEquals(0, r.exit(), r.err());
        JsonNode j = r.json();
        assertEquals(24 * 8, j.get("published").asLong());
        assertEquals(j.get("published").asLong(), j.get("stored").asLong());
        assertEquals(0, j.get("abandoned").size());
        assertEquals(24, j.get("restored_full").asLong());
        assertEquals(0, j.get("recomputed").asLong());
        assertTrue(j.get("verified").asBoolean());
        assertTrue(j.get("raw_copy_gbps").asDouble() > 0);
        assertEquals(2, j.get("raw_copy_pass_gbps").size(), "the raw copy runs in two halves around the burst");
        assertEquals(2, j.get("raw_copy_pass_cpu_gbps").size(), "each half's rate per CPU-second of its threads");
        assertTrue(j.get("raw_copy_pass_cpu_gbps").get(0).asDouble() > 0);
        assertTrue(j.get("raw_whole_copy_gbps").asDouble() > 0, "and once as one large copy per record");
        assertEquals(0.0, j.get("retries_per_publication").asDouble(), "the node holds a waiting publication itself");
        assertTrue(j.get("publish_cpu_gbps").asDouble() > 0, "the copy threads' CPU time is measured");
        assertTrue(j.get("raw_copy_cpu_gbps").asDouble() > 0, "and the raw copy's");
        assertTrue(j.get("publish_cpu_ratio").asDouble() > 0);
        assertTrue(j.get("cpu_us_per_publication_beside_copy").asDouble() > 0, "the rest of the process's CPU time");
        assertEquals(j.get("publish_vs_raw_copy").asDouble(), j.get("publish_wall_ratio").asDouble());
        assertTrue(j.get("bytes_published").asLong() > 0);
        assertTrue(r.out().contains("restored full / partial"), "the human table is printed too");
        assertTrue(r.out().contains("verdict: OK: every publication kept, 24/24 conversations restored in full, "
                + "every restored byte verified"), r.out());
    }

    @Test
    void burst_withTooSmallWarmTier_accountsForEveryPublication() throws Exception {
        Run r = run("burst", "--layout", "small", "--conversations", "40", "--concurrency", "8", "--tokens", "256",
                "--warm", "64k", "--device", "simulated", "--no-progress", "--json");
        assertEquals(0, r.exit(), r.err());
        JsonNode j = r.json();
        long abandoned = 0;
        for (JsonNode n : j.get("abandoned")) {
            abandoned += n.asLong();
        }
        assertEquals(j.get("published").asLong(), j.get("stored").asLong() + j.get("present").asLong()
                + j.get("oversize").asLong() + j.get("failed").asLong() + abandoned);
        assertTrue(j.get("accounted").asBoolean());
        assertTrue(j.get("recomputed").asLong() + j.get("restored_partial").asLong() > 0,
                "a warm tier this small cannot keep every conversation");
        assertTrue(j.get("verified").asBoolean(), "whatever is restored is byte-identical");
        assertTrue(r.out().contains("verdict: NOT MET: "), "a run that recomputes conversations says so: " + r.out());
        assertTrue(r.out().contains("(memory only: the warm tier holds "), "and says why: " + r.out());
    }

    @Test
    void diskOnlyBurst_withACpuHog_countsEveryPublicationWithItsReason_andEndsTheHog() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory(
                java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", "burst-tests")), "cpu-hog");
        Run r = run("burst", "--preset", "disk-only", "--disk-dir", dir.toString(), "--disk-size", "64m",
                "--layout", "small", "--conversations", "16", "--concurrency", "4", "--tokens", "256",
                "--device", "simulated", "--cpu-hog", "--no-progress", "--no-warmup", "--json");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.err().contains("burns one core for the whole run"), r.err());
        JsonNode j = r.json();
        assertTrue(j.get("cpu_hog").asBoolean());
        assertTrue(j.get("accounted").asBoolean(), "every publication counted, abandoned ones with their reason");
        assertTrue(j.get("verified").asBoolean());
        assertEquals(0, ProcessHandle.current().children().filter(ProcessHandle::isAlive).count(),
                "the hog ended with the run");
    }

    @Test
    void runs_reportTheMedianOfEveryRatioOverAllRuns() throws Exception {
        Run r = run("burst", "--layout", "small", "--conversations", "8", "--concurrency", "4", "--tokens", "256",
                "--device", "simulated", "--no-progress", "--no-warmup", "--runs", "3", "--json");
        assertEquals(0, r.exit(), r.err());
        JsonNode j = r.json();
        assertEquals(3, j.get("runs").asInt());
        assertEquals(3, j.get("runs_ratios").size());
        double[] wall = new double[3];
        for (int i = 0; i < 3; i++) {
            wall[i] = j.get("runs_ratios").get(i).get("publish_wall_ratio").asDouble();
        }
        java.util.Arrays.sort(wall);
        assertEquals(wall[1], j.get("publish_wall_ratio").asDouble(), 1e-9, "the middle of the three runs");
        assertTrue(r.out().contains("median of 3 runs"), r.out());
        assertEquals(3, r.err().lines().filter(l -> l.matches("run \\d/3: .*")).count(), r.err());
    }

    @Test
    void runsWithThePoolPreset_orOutOfRange_isRefusedWithOneLine() {
        Run pool = run("burst", "--preset", "pool", "--runs", "2");
        assertEquals(2, pool.exit());
        assertTrue(pool.err().contains("--runs 2 is invalid with --preset pool"), pool.err());
        Run zero = run("burst", "--runs", "0");
        assertEquals(2, zero.exit());
        assertTrue(zero.err().contains("--runs 0 is invalid; allowed: 1..20"), zero.err());
    }

    @Test
    void badFlag_getsOneClearLine_noStackTrace() {
        Run r = run("burst", "--warm", "lots");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("--warm = 'lots' is invalid"), r.err());
        assertFalse(r.err().contains("\tat "), "no stack trace: " + r.err());
    }

    @Test
    void unknownLayout_namesTheAllowedValues() {
        Run r = run("burst", "--layout", "llama");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("allowed: deepseek-tp4, qwen-tp1, small"), r.err());
    }

    @Test
    void diskOnly_restartWithDrain_restoresEveryConversationFromDisk_andLeavesNothingBesideTheTier() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory(
                java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", "burst-tests")), "disk-only");
        Run r = run("burst", "--preset", "disk-only", "--disk-dir", dir.toString(), "--disk-size", "64m",
                "--layout", "small", "--conversations", "16", "--concurrency", "4", "--tokens", "256",
                "--device", "simulated", "--restart", "--drain", "--no-progress", "--json",
                // every publication waits for a spill here: snapshots that outlive a slow disk on a loaded machine
                "--snapshot-ms", "30000");
        assertEquals(0, r.exit(), r.err());
        JsonNode j = r.json();
        assertEquals(0, j.get("abandoned").size());
        assertEquals(16, j.get("restored_full").asLong());
        assertTrue(j.get("restored_from_disk_records").asLong() > 0, "disk-only restores come from disk");
        assertEquals(16, j.get("restored_after_restart").get("full").asLong());
        assertTrue(j.get("verified").asBoolean());
        assertTrue(j.get("max_write_depth").asLong() >= 1);
        double meanDepth = j.get("mean_write_depth").asDouble();
        assertTrue(meanDepth > 0 && meanDepth <= j.get("write_depth_cap").asLong(),
                "writes in flight on average, within the scheduler's cap: " + meanDepth);
        assertTrue(j.get("raw_disk_write_gbps").asDouble() > 0, "raw O_DIRECT baseline measured in the same run");
        assertTrue(j.get("mean_read_depth").asDouble() > 0, "the probe's reads in flight on average");
        assertEquals(16, j.get("raw_disk_read_threads").asLong(), "as many raw readers as the blocking dispatcher has");
        assertEquals(0, j.get("disk_full").asLong());
        assertTrue(j.get("spill_wall_ratio").asDouble() > 0, "spill against raw O_DIRECT, same run");
        assertTrue(j.get("restore_read_ratio").asDouble() > 0, "disk reads against raw O_DIRECT reads, same run");
        assertFalse(java.nio.file.Files.exists(dir.resolve("raw-baseline")), "the baseline never writes in the tier");
        assertFalse(java.nio.file.Files.exists(dir.resolveSibling(dir.getFileName() + ".raw-baseline")),
                "the baseline's scratch directory beside the tier is gone after the run");
        assertFalse(java.nio.file.Files.exists(dir.resolveSibling(dir.getFileName() + ".warmup")),
                "the warm-up's disk directory beside the tier is gone after the run");
    }

    @Test
    void aDiskThatStaysFull_faultInjected_isReported_everyPublicationCounted_andTheExitCodeIs3() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory(
                java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", "burst-tests")), "full");
        dev.selene.engine.layout.Layout layout = dev.selene.engine.layout.Layout.small();
        dev.selene.node.burst.BurstSettings settings = new dev.selene.node.burst.BurstSettings(layout, 12, 4, 256, 2,
                0, 300, "simulated", 1, 0, 7, false, false, dir);
        dev.selene.engine.config.CacheConfig config = dev.selene.engine.config.CacheConfig.memoryOnly(layout, 0)
                .withConcurrency(4).withDisk(dir.toString(), 64L << 20);
        dev.selene.node.burst.BurstReport report = new dev.selene.node.burst.BurstRun(settings,
                new PrintStream(java.io.OutputStream.nullOutputStream()),
                copier -> dev.selene.actors.api.SeleneCache.start(config, copier, executor -> {
                    var io = new dev.selene.transport.disk.FaultInjectingRecordIo(executor, 4);
                    io.failEveryPreallocation(dev.selene.transport.disk.NativeIo.ENOSPC);
                    return io;
                })).run(false);
        assertTrue(report.diskFull() > 0, "writes found the disk full");
        assertTrue(report.abandonedTotal() > 0, "with nowhere to spill, the intake fills and publications give up");
        assertEquals(report.accountedFor(), 12L * settings.recordsPerConversation(), "nothing unaccounted for");
        assertTrue(report.verified(), "whatever is restored is byte-identical");
        assertEquals(3, BurstCommand.exitCode(report));
        assertTrue(report.table().contains("disk full (ENOSPC)"), report.table());
    }

    @Test
    void pool_retiresToTwoManagerJvms_restoresFromThePool_andStopsThem() throws Exception {
        java.nio.file.Path logs = java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", "burst-tests",
                "pool"));
        Run r = run("burst", "--preset", "pool", "--disk-dir", logs.toString(), "--layout", "small",
                "--conversations", "8", "--concurrency", "4", "--tokens", "256", "--snapshot-ms", "20000",
                "--device", "simulated", "--no-progress", "--no-warmup", "--json");
        assertEquals(0, r.exit(), r.err());
        JsonNode j = r.json();
        assertEquals(0, j.get("abandoned").size(), "a 20 s snapshot budget outlasts the retirements");
        assertTrue(j.get("accounted").asBoolean());
        assertEquals(8, j.get("restored_full").asLong());
        assertTrue(j.get("verified").asBoolean());
        assertEquals(2, j.get("pool_managers").asInt());
        assertEquals(j.get("stored").asLong(), j.get("pool_retired_records").asLong(), "the drain retired the rest");
        assertTrue(j.get("restored_from_pool").asLong() > 0, "a warm tier of a tenth of the burst keeps little");
        // The small layout's rates round to 0.000 GB/s; their ratios to the raw path, measured in the same run, do not.
        for (String measured : new String[] {"pool_write_bytes", "pool_read_bytes", "raw_write_gbps",
                "raw_read_gbps", "pool_write_ratio", "pool_read_ratio", "pool_cpu_s_per_gb", "raw_cpu_s_per_gb"}) {
            assertTrue(j.get(measured).asDouble() > 0, measured + " measured: " + j);
        }
        // The pool's rates are taken over the time it had transfers in flight: inside its phases, never a sum of
        // overlapping transfers' times.
        double writeBusy = j.get("pool_write_busy_seconds").asDouble();
        double readBusy = j.get("pool_read_busy_seconds").asDouble();
        assertTrue(writeBusy > 0 && writeBusy <= j.get("pool_retire_seconds").asDouble() + 0.01, j.toString());
        assertTrue(readBusy > 0 && readBusy <= j.get("pool_restore_seconds").asDouble() + 0.01, j.toString());
        // The data planes' threads are part of both ends' CPU, for the pool and for the raw baseline alike.
        for (String side : new String[] {"pool", "raw"}) {
            double data = j.get(side + "_data_cpu_s_per_gb").asDouble();
            assertTrue(data > 0 && data <= j.get(side + "_cpu_s_per_gb").asDouble() + 0.001, side + ": " + j);
        }
        assertTrue(r.out().contains("pool write GB/s (raw data plane)"), "the human table shows the pool");
        assertEquals(0, ProcessHandle.current().children().count(), "the manager JVMs are stopped");
    }

    @Test
    void aPoolLogDirectoryThatIsAFile_isRefusedWithOneLine_beforeAManagerStarts() throws Exception {
        java.nio.file.Path file = java.nio.file.Files.writeString(java.nio.file.Files.createTempDirectory(
                java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", "burst-tests")), "logs")
                .resolve("afile"), "x");
        Run r = run("burst", "--preset", "pool", "--disk-dir", file.toString(), "--layout", "small",
                "--conversations", "2", "--no-warmup", "--no-progress");
        assertEquals(2, r.exit(), r.err());
        assertTrue(r.err().contains("--disk-dir '" + file + "' is invalid: not a directory; allowed: a writable "
                + "directory"), r.err());
        assertFalse(r.err().contains("starting 2 pool managers"), r.err());
        assertEquals(0, ProcessHandle.current().children().count(), "no manager JVM was started");
    }

    @Test
    void aWarmTierUnderOneSlot_isRefused_asServeRefusesIt() {
        for (String command : List.of("burst", "soak")) {
            Run r = run(command, "--layout", "small", "--warm", "1", "--no-warmup");
            assertEquals(2, r.exit(), command + ": " + r.err());
            assertTrue(r.err().contains("--warm = '1' is invalid; allowed: 0 (no warm tier) or at least one slot of "
                    + "the layout ("), command + ": " + r.err());
        }
    }

    @Test
    void noWarmTier_onAPresetWithNoOtherTier_isRefusedInOneLine() {
        for (String command : List.of("burst", "soak")) {
            Run r = run(command, "--layout", "small", "--warm", "0", "--conversations", "2", "--no-warmup");
            assertEquals(2, r.exit(), command + ": " + r.err());
            assertTrue(r.err().contains("--warm = '0' is invalid with --preset memory-only, which has no other tier"),
                    command + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), command + ": " + r.err());
        }
    }

    @Test
    void snapshotsLargerThanTheMachine_areRefusedWithOneLine_beforeAnyIsWritten() {
        Run r = run("burst", "--preset", "disk-only", "--layout", "small", "--tokens", "100000000", "--conversations",
                "1", "--no-warmup", "--no-progress");
        assertEquals(2, r.exit(), r.err());
        assertTrue(r.err().contains("the burst is too large for this machine: its snapshots take "), r.err());
        assertTrue(r.err().contains("allowed: fewer or shorter conversations (--conversations, --tokens, --turns)"),
                r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    @Test
    void moreReplicasThanManagers_isRefusedWithOneLine() {
        Run r = run("burst", "--preset", "pool", "--managers", "2", "--replicas", "3");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("--replicas 3 is invalid; allowed: 1..2 (--managers)"), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    @Test
    void anAutomaticWarmTierTooLargeForTheBudget_isRefusedNamingTheWorkloadOptionsThatSizeIt() {
        Run r = run("burst", "--tokens", "2000000000", "--device", "simulated", "--no-progress");
        assertEquals(2, r.exit());
        assertTrue(r.err().startsWith("selene: --warm = 'auto' ("), r.err());
        assertTrue(r.err().contains("(the automatic size holds the whole burst: fewer or shorter conversations, "
                + "--conversations, --tokens, --turns, or a --warm of its own)"), r.err());
    }

    @Test
    void optionsThePresetHasNoUseFor_areRefusedWithOneLine_notIgnored() {
        Object[][] cases = {
                {new String[]{"--disk-dir", "/nonexistent"}, "--disk-dir needs a disk tier (--preset 8g or disk-only) "
                        + "or --preset pool (its managers' logs)"},
                {new String[]{"--disk-size", "8g"}, "--disk-size needs a disk tier; use --preset 8g or disk-only"},
                {new String[]{"--keep-disk"}, "--keep-disk needs a disk tier; use --preset 8g or disk-only"},
                {new String[]{"--pool-tls"}, "--pool-tls needs --preset pool"},
                {new String[]{"--managers", "3"}, "--managers needs --preset pool"},
                {new String[]{"--preset", "disk-only", "--replicas", "1"}, "--replicas needs --preset pool"},
                {new String[]{"--preset", "disk-only", "--disk-size", "0"}, "--disk-size '0' is invalid; allowed: at "
                        + "least one record ("},
        };
        for (Object[] c : cases) {
            java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("burst", "--layout", "small",
                    "--no-progress"));
            args.addAll(java.util.List.of((String[]) c[0]));
            Run r = run(args.toArray(String[]::new));
            assertEquals(2, r.exit(), r.err());
            assertTrue(r.err().startsWith("selene: " + c[1]), r.err());
        }
    }

    @Test
    void restartWithoutADisk_isRefusedWithOneLine() {
        Run r = run("burst", "--restart");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("--restart and --drain need a disk tier"), r.err());
    }

    @Test
    void diskDirHoldingOtherFiles_isRefusedWithOneLine_andNothingIsDeleted() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory(
                java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", "burst-tests")), "precious");
        java.nio.file.Path precious = java.nio.file.Files.writeString(dir.resolve("notes.txt"), "keep me");
        Run r = run("burst", "--preset", "disk-only", "--disk-dir", dir.toString(), "--layout", "small",
                "--conversations", "2", "--no-warmup", "--no-progress");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("holds files that are not Selene's"), r.err());
        assertTrue(java.nio.file.Files.exists(precious), "nothing deleted");
        assertFalse(java.nio.file.Files.exists(dir.resolve(dev.selene.transport.disk.DirectoryLock.LOCK_FILE_NAME)),
                "nothing added: a refused directory is left as it was");
    }

    @Test
    void diskDirHoldingLookAlikes_isRefused_andNothingIsDeleted_neitherSuffixNorNameMakesAFileSelenes()
            throws Exception {
        for (String[] files : List.of(new String[] {"show.rec"}, new String[] {"draft.rec.tmp"},
                new String[] {"quarantine/keep.txt", "ns@00000000000000ff.rec"},
                new String[] {"other@0123456789abcdef.rec"}, new String[] {"ns@00000000000000FF.rec"})) {
            java.nio.file.Path dir = java.nio.file.Files.createTempDirectory(
                    java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", "burst-tests")), "alike");
            List<java.nio.file.Path> kept = new java.util.ArrayList<>();
            for (String f : files) {
                java.nio.file.Path file = dir.resolve(f);
                java.nio.file.Files.createDirectories(file.getParent());
                kept.add(java.nio.file.Files.writeString(file, "keep me"));
            }
            Run r = run("burst", "--preset", "disk-only", "--disk-dir", dir.toString(), "--layout", "small",
                    "--conversations", "2", "--no-warmup", "--no-progress");
            assertEquals(2, r.exit(), String.join(",", files) + ": " + r.err());
            assertTrue(r.err().contains("holds files that are not Selene's"), r.err());
            for (java.nio.file.Path f : kept) {
                assertTrue(java.nio.file.Files.exists(f), f + " deleted");
            }
        }
    }

    @Test
    void diskDirOfARunningNode_isRefused_andItsFilesAreKept() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory(
                java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", "burst-tests")), "live");
        java.nio.file.Path record = java.nio.file.Files.writeString(dir.resolve("ns@00000000000000ff.rec"), "x");
        try (var lock = dev.selene.transport.disk.DirectoryLock.acquire(dir)) {
            Run r = run("burst", "--preset", "disk-only", "--disk-dir", dir.toString(), "--layout", "small",
                    "--conversations", "2", "--no-warmup", "--no-progress");
            assertEquals(2, r.exit());
            assertTrue(r.err().contains("already used"), r.err());
            assertTrue(java.nio.file.Files.exists(record), "the live node's record is kept");
        }
    }
}
