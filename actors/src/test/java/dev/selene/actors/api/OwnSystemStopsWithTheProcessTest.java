package dev.selene.actors.api;

import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.RecordFileNames;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A cache started in an actor system of its own, in a child JVM ended from outside (SIGTERM): the node and its system
 * stop with the process, as Pekko's coordinated shutdown does on the JVM's shutdown hook. Before, nothing loaded the
 * coordinated shutdown in such a system, so the node went on running (and writing) while the process ended.
 */
class OwnSystemStopsWithTheProcessTest {

    /** The child: starts a cache, says so, and from a shutdown hook of its own says whether the node stopped. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            Layout layout = Layout.small();
            CacheConfig config = CacheConfig.memoryOnly(layout, 64L * layout.slotBytes()).withConcurrency(1)
                    .withWindowSlots(layout.slotsPerRecord(true)).withHostBudgetBytes(128L * layout.slotBytes());
            SeleneCache cache = SeleneCache.start(config);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    cache.system().getWhenTerminated().toCompletableFuture().get(15, TimeUnit.SECONDS);
                    System.out.println("node stopped");
                } catch (Exception e) {
                    System.out.println("node still running");
                }
                System.out.flush();
            }));
            System.out.println("started");
            System.out.flush();
            Thread.sleep(TimeUnit.MINUTES.toMillis(2)); // ended from outside long before
        }
    }

    /** The test JVM's class path, with its module path in front when surefire runs the module's own code as one. */
    /**
     * The child with a disk tier that drains at shutdown: publishes {@value #RECORDS} records (all held in memory,
     * none written yet), says how many are on disk, and, when its first argument is {@code close}, closes the cache
     * from a shutdown hook of its own as an application would.
     */
    public static final class DrainingChild {
        public static void main(String[] args) throws Exception {
            Layout layout = Layout.small();
            CacheConfig config = CacheConfig.memoryOnly(layout, 256L * layout.slotBytes()).withConcurrency(1)
                    .withWindowSlots(layout.slotsPerRecord(true)).withHostBudgetBytes(512L * layout.slotBytes())
                    .withDisk(args[1], 64L << 20).withDrainOnShutdown(true);
            SimulatedDevice device = SimulatedDevice.create();
            SeleneCache cache = SeleneCache.start(config, device);
            for (int i = 0; i < RECORDS; i++) {
                RecordSpec spec = new RecordSpec(new RecordKey("drain", i + 1), null, true);
                long base = device.allocateDevice(DevicePlacement.bytesNeeded(layout, true));
                DevicePlacement snapshot = DevicePlacement.contiguous(layout, base, true);
                KeyedContent.fillRecord(device, layout, snapshot, spec.key(), true);
                cache.publish(spec, snapshot).toCompletableFuture().get(30, TimeUnit.SECONDS);
                device.freeDevice(base);
            }
            if (args[0].equals("close")) {
                Runtime.getRuntime().addShutdownHook(new Thread(cache::close));
            }
            System.out.println("started " + cache.status().toCompletableFuture().get(30, TimeUnit.SECONDS).disk()
                    .records());
            System.out.flush();
            Thread.sleep(TimeUnit.MINUTES.toMillis(2)); // ended from outside long before
        }
    }

    private static final int RECORDS = 20;

    private static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        cp = cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
        String modules = System.getProperty("jdk.module.path");
        return modules == null || modules.isBlank() ? cp : modules + File.pathSeparator + cp;
    }

    /** Starts {@code main} with {@code args}, waits for its line starting "started", SIGTERMs it; that line. */
    private static String endedFromOutside(Class<?> main, Path err, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx256m",
                "-cp", classpath(), main.getName()));
        cmd.addAll(List.of(args));
        Process child = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line = out.readLine();
            assertTrue(line != null && line.startsWith("started"), "the child started; it printed " + line
                    + " and " + Files.readString(err));
            child.toHandle().destroy(); // SIGTERM
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child ended");
            return line;
        } finally {
            child.destroyForcibly();
        }
    }

    private static long recordFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(RecordFileNames.RECORD_SUFFIX)).count();
        }
    }

    /** Runs the draining child in {@code mode}, ends it from outside, and checks every record is on disk. */
    private static void assertEveryRecordDrained(Path dir, String mode) throws Exception {
        Path disk = Files.createDirectory(dir.resolve("disk"));
        String started = endedFromOutside(DrainingChild.class, dir.resolve("child.err"), mode, disk.toString());
        assertEquals("started 0", started, "nothing written before the stop: else this test shows nothing");
        assertEquals(RECORDS, recordFiles(disk), "every record drained to disk; the child's log: "
                + Files.readString(dir.resolve("child.err")));
    }

    @Test
    void aCacheThatDrainsAtShutdown_drainsWhenTheProcessIsEndedFromOutside(@TempDir Path dir) throws Exception {
        assertEveryRecordDrained(dir, "none");
    }

    @Test
    void aCacheThatDrainsAtShutdown_closedFromTheApplicationsOwnHook_drainsEveryRecord(@TempDir Path dir)
            throws Exception {
        assertEveryRecordDrained(dir, "close");
    }

    @Test
    void aCacheInItsOwnSystem_stopsWhenTheProcessIsEndedFromOutside(@TempDir Path dir) throws Exception {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx256m",
                "-cp", classpath(), Child.class.getName());
        Path err = dir.resolve("child.err");
        Process child = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null && !line.equals("started")) {
                lines.add(line);
            }
            assertEquals("started", line, "the child started its cache; it printed " + lines + " and "
                    + Files.readString(err));
            child.toHandle().destroy(); // SIGTERM; the process's own destroy() would close its output too
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child ended");
            assertEquals("node stopped", out.readLine(), "what the child's own hook saw of the node");
        } finally {
            child.destroyForcibly();
        }
    }
}
