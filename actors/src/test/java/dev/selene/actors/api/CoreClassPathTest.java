package dev.selene.actors.api;

import com.typesafe.config.ConfigFactory;
import dev.selene.actors.cache.HostCache;
import dev.selene.engine.config.CacheConfig;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The core (memory, disk and the Java API) pulls no cluster: an application that depends on selene-actors alone gets
 * no Pekko Cluster, sharding, distributed data, persistence, LMDB, jnr or Netty on its class path. The first check
 * reads the runtime class path Maven resolved for this module (written by the build, see the module's pom); the
 * second, this test's own class path, on which the embedding example runs.
 */
class CoreClassPathTest {

    /** Jars that only the pool brings: its cluster (with distributed data and persistence) and its data plane. */
    private static final Pattern POOL_ONLY = Pattern.compile(
            "(pekko-cluster|pekko-distributed-data|pekko-persistence|pekko-coordination|lmdbjava|jnr-|jffi|netty-)"
                    + "[^/]*\\.jar$");

    @Test
    void theCoresRuntimeClassPath_hasNoClusterPersistenceLmdbJnrOrNetty() throws IOException {
        Path file = Path.of("target/core-runtime-classpath.txt");
        assertTrue(Files.exists(file), file + " is written by the build (mvn install or ./selene test)");
        List<String> jars = Arrays.asList(Files.readString(file).strip().split(File.pathSeparator));
        assertTrue(jars.stream().anyMatch(j -> j.contains("pekko-actor-typed")), "the file lists the class path: " + jars);
        assertEquals(List.of(), jars.stream().filter(j -> POOL_ONLY.matcher(j).find()).toList(),
                "jars on the core's runtime class path that only the pool needs");
    }

    @Test
    void theEmbeddingExamplesClassPath_hasNoCluster() {
        List<String> jars = Arrays.asList(System.getProperty("java.class.path").split(File.pathSeparator));
        assertEquals(List.of(), jars.stream().filter(j -> POOL_ONLY.matcher(j).find()).toList());
        assertThrows(ClassNotFoundException.class, () -> Class.forName("org.apache.pekko.cluster.Cluster"));
        assertFalse(jars.stream().anyMatch(j -> j.contains("selene-pool")));
    }

    @Test
    void aNodeWithPoolManagers_withoutThePoolModule_refusesToStartWithOneLine() {
        CacheConfig config = CacheSettings.fromConfig(ConfigFactory.parseString(
                "selene { layout = small, warm = 0, concurrency = 2, pool.managers = [\"127.0.0.1:1\"] }")
                .withFallback(ConfigFactory.load()));
        try (SimulatedDevice gpu = SimulatedDevice.create()) {
            // a SettingsException, as the documentation promises for a setting at fault
            SettingsException e = assertThrows(SettingsException.class, () -> SeleneCache.start(config, gpu));
            assertEquals(HostCache.NO_REMOTE_TIER, e.getMessage());
        }
    }
}
