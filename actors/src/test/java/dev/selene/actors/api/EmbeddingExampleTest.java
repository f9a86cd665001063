package dev.selene.actors.api;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.selene.actors.cache.HostCache;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;
import example.EmbeddingExample;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The example of {@code docs/embedding.md}, run: {@link EmbeddingExample} (shown whole in the guide) on an
 * application's own actor system, a chain published from (simulated) device memory, looked up and restored byte for
 * byte, nothing left running once the system has terminated; the host's Pekko settings left as the application set
 * them; and every Java block of the guide is code of the example or of this test.
 */
class EmbeddingExampleTest {

    private static final String NS = "embedding";
    private static final Duration TERMINATION_TIMEOUT = Duration.ofSeconds(30);

    /** Device allocations of the running test, freed before its copier closes. */
    private final List<Long> allocations = new ArrayList<>();

    @Test
    void theGuidesExample_restoresAPublishedChain_andLeavesNothingRunning() {
        // issue 26: the guide's example did not compile as written; it is now this class, shown whole in the guide
        Config config = ConfigFactory.load("embedding-example");
        assertEquals(3, EmbeddingExample.run(config), "every record of the chain restored byte for byte");
        // A terminated system's dispatchers let their threads go just after termination completes: a moment later.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!liveThreadsOf("example").isEmpty() && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        assertEquals(List.of(), liveThreadsOf("example"), "the system's threads are gone once run has returned");
    }

    @Test
    void thePublisherSnippet_publishesWithinItsLease() throws Exception {
        Config settings = ConfigFactory.parseString("selene { layout = small, warm = 16m, concurrency = 4 }")
                .withFallback(ConfigFactory.load());
        CacheConfig config = CacheSettings.fromConfig(settings);
        try (SimulatedDevice gpu = SimulatedDevice.create()) {
            SeleneCache cache = SeleneCache.start(config, gpu);
            try {
                RecordSpec spec = new RecordSpec(key(301), null, true);
                DevicePlacement snapshot = deviceRecord(gpu, cache.layout(), true);
                KeyedContent.fillRecord(gpu, cache.layout(), snapshot, spec.key(), true);
                PublishOutcome outcome = EmbeddingExample.publishWithinLease(cache, spec, snapshot);
                assertInstanceOf(PublishResult.Stored.class, outcome.result(), outcome.toString());
                assertFalse(outcome.abandoned());
            } finally {
                cache.close();
                freeDeviceMemory(gpu);
            }
        }
    }

    @Test
    void theGuidesCode_isTheCodeThatRuns() throws IOException {
        String guide = Files.readString(GUIDE);
        String example = Files.readString(EXAMPLE);
        List<String> javaBlocks = blocks(guide, "java");
        assertTrue(javaBlocks.contains(example.strip()), "the guide shows EmbeddingExample.java whole, imports included");
        String sources = example + Files.readString(Path.of("src/test/java/dev/selene/actors/api/EmbeddingExampleTest.java"));
        for (String block : javaBlocks) {
            assertTrue(strippedLines(sources).contains(strippedLines(block)),
                    "every Java block of the guide is code of the example or its test:\n" + block);
        }
        String conf = Files.readString(Path.of("src/test/resources/embedding-example.conf")).strip();
        assertTrue(blocks(guide, "hocon").contains(conf), "the guide shows embedding-example.conf whole");
    }

    private static final Path GUIDE = Path.of("../docs/embedding.md");
    private static final Path EXAMPLE = Path.of("src/test/java/example/EmbeddingExample.java");

    /** The fenced blocks of {@code language} in {@code markdown}, stripped. */
    private static List<String> blocks(String markdown, String language) {
        List<String> found = new ArrayList<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?s)```" + language + "\\n(.*?)```")
                .matcher(markdown);
        while (m.find()) {
            found.add(m.group(1).strip());
        }
        return found;
    }

    /** The text's lines without their indentation, joined: so that an excerpt matches at any depth. */
    private static String strippedLines(String text) {
        return String.join("\n", text.lines().map(String::strip).toList());
    }

    @Test
    void librarysReferenceConf_setsNothingUnderPekko() throws IOException {
        assertFalse(referenceConfOf(CacheSettings.class).hasPath("pekko"), "selene's reference.conf");
        Config pekkos = referenceConfOf(org.apache.pekko.actor.ActorSystem.class);
        Config merged = ConfigFactory.defaultReference();
        for (String path : List.of("pekko.loggers", "pekko.log-dead-letters", "pekko.loglevel",
                "pekko.actor.default-dispatcher.fork-join-executor.minimum-runnable")) {
            assertEquals(pekkos.getValue(path).unwrapped(), merged.getValue(path).unwrapped(), path);
        }
    }

    @Test
    void nodeSpawnedUnderTheApplicationsGuardian_servesThroughTheFacade() throws Exception {
        Config settings = ConfigFactory.parseString("selene { layout = small, warm = 16m, concurrency = 4 }")
                .withFallback(ConfigFactory.load());
        CacheConfig config = CacheSettings.fromConfig(settings);
        SimulatedDevice gpu = SimulatedDevice.create();
        HostCache.Parts parts = HostCache.Parts.of(gpu);
        CompletableFuture<ActorRef<HostCache.Command>> spawned = new CompletableFuture<>();
        ActorSystem<Void> system = ActorSystem.create(guardian(config, parts, spawned), "embedding-guardian",
                settings);
        try {
            SeleneCache cache = SeleneCache.over(system, spawned.get(10, TimeUnit.SECONDS), config, parts);
            Layout layout = cache.layout();
            RecordSpec spec = new RecordSpec(key(201), null, true);
            DevicePlacement snapshot = deviceRecord(gpu, layout, true);
            KeyedContent.fillRecord(gpu, layout, snapshot, spec.key(), true);
            assertInstanceOf(PublishResult.Stored.class, await(cache.publish(spec, snapshot)));
            DevicePlacement target = deviceRecord(gpu, layout, true);
            RestoreResult restored = await(cache.restore(NS, new long[] {201}, List.of(target), Duration.ofSeconds(1)));
            assertEquals(RestoreResult.Outcome.RESTORED, restored.outcome(), restored.detail());
            assertTrue(KeyedContent.verifyRecord(gpu, layout, target, spec.key(), true));
            assertEquals("", await(cache.invariantViolation()));
            cache.close();
        } finally {
            try {
                terminate(system);
            } finally {
                freeDeviceMemory(gpu);
                gpu.close();
            }
        }
    }

    /** An application's guardian that runs the cache node as one of its children. */
    private static Behavior<Void> guardian(CacheConfig config, HostCache.Parts parts,
                                           CompletableFuture<ActorRef<HostCache.Command>> spawned) {
        return Behaviors.setup(ctx -> {
            spawned.complete(ctx.spawn(HostCache.create(config, parts), "selene"));
            return Behaviors.empty();
        });
    }

    private static RecordKey key(long hash) {
        return new RecordKey(NS, hash);
    }

    private DevicePlacement deviceRecord(DeviceCopier gpu, Layout layout, boolean hasRow) {
        long base = gpu.allocateDevice(DevicePlacement.bytesNeeded(layout, hasRow));
        allocations.add(base);
        return DevicePlacement.contiguous(layout, base, hasRow);
    }

    private void freeDeviceMemory(DeviceCopier gpu) {
        allocations.forEach(gpu::freeDevice);
        allocations.clear();
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** Terminates {@code system} and waits until none of its non-daemon threads is left. */
    private static void terminate(ActorSystem<?> system) throws Exception {
        assertFalse(liveThreadsOf(system.name()).isEmpty(), "a running system's threads are found by name");
        system.terminate();
        system.getWhenTerminated().toCompletableFuture().get(TERMINATION_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        Awaitility.await().atMost(TERMINATION_TIMEOUT).pollInterval(Duration.ofMillis(20))
                .until(() -> liveThreadsOf(system.name()).isEmpty());
    }

    private static List<String> liveThreadsOf(String systemName) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && !t.isDaemon() && t.getName().startsWith(systemName))
                .map(Thread::getName)
                .toList();
    }

    /** The {@code reference.conf} shipped in the same jar (or class directory) as {@code owner}. */
    private static Config referenceConfOf(Class<?> owner) throws IOException {
        String home = owner.getProtectionDomain().getCodeSource().getLocation().toString();
        for (URL url : Collections.list(owner.getClassLoader().getResources("reference.conf"))) {
            String path = url.toString();
            if (path.equals(home + "reference.conf") || path.equals("jar:" + home + "!/reference.conf")) {
                return ConfigFactory.parseURL(url);
            }
        }
        throw new IllegalStateException("no reference.conf next to " + home);
    }
}
