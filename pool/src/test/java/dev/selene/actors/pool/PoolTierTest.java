package dev.selene.actors.pool;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.store.RemoteTier;
import dev.selene.engine.config.CacheConfig;
import dev.selene.actors.api.SeleneCache;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pool as the core's remote tier: found by the node when this module is on the class path, and the settings of
 * an actor system the node makes for a pool host (a member of the pool's cluster under the pool's name).
 */
class PoolTierTest {

    private static final Config SETTINGS = ConfigFactory.parseString(
            "selene { layout = small, warm = 0, concurrency = 2, pool.managers = [\"127.0.0.1:7355\"] }")
            .withFallback(ConfigFactory.load());

    @Test
    void theNodeFindsThePool_whenItsModuleIsOnTheClassPath() {
        assertInstanceOf(PoolTier.class, RemoteTier.installed().orElseThrow());
    }

    @Test
    void aSystemTheNodeMakes_joinsThePoolsClusterUnderThePoolsName() {
        CacheConfig config = CacheSettings.fromConfig(SETTINGS);
        RemoteTier.SystemSetup setup = new PoolTier().system(SETTINGS, "selene-test", config);
        assertEquals(PoolCluster.SYSTEM_NAME, setup.name());
        assertEquals("cluster", setup.settings().getString("pekko.actor.provider"));
        assertEquals(List.of("pekko://" + PoolCluster.SYSTEM_NAME + "@127.0.0.1:7355"),
                setup.settings().getStringList("pekko.cluster.seed-nodes"));
        String hint = new PoolTier().unreachableHint(setup.settings());
        assertTrue(hint.contains("spelled as that manager binds it") && hint.contains("run without TLS"), hint);
    }

    @Test
    void anInvalidFailoverDeadline_isOneLine() {
        Config bad = ConfigFactory.parseString("selene.pool.failover-after = -1s").withFallback(SETTINGS);
        CacheConfig config = CacheSettings.fromConfig(SETTINGS);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new PoolTier().system(bad, "selene", config));
        assertTrue(e.getMessage().contains("selene.pool.failover-after") && !e.getMessage().contains("\n"),
                e.getMessage());
    }

    /** A pool host told to wait an unusable time for its managers refuses to start at once, in one line. */
    @Test
    void anInvalidJoinTimeout_stopsTheStartAtOnce_inOneLineNamingTheSetting() {
        Config bad = ConfigFactory.parseString("selene.pool.join-timeout = 100ms")
                .withFallback(CacheSettings.standaloneSystemConfig());
        CacheConfig config = CacheSettings.fromConfig(SETTINGS);
        long start = System.nanoTime();
        try (SimulatedDevice device = SimulatedDevice.create()) {
            RuntimeException e = assertThrows(RuntimeException.class,
                    () -> SeleneCache.start(config, device, bad, "selene").close());
            long took = System.nanoTime() - start;
            assertTrue(e.getMessage().contains("selene.pool.join-timeout") && !e.getMessage().contains("\n"),
                    e.getMessage());
            assertTrue(took < java.util.concurrent.TimeUnit.SECONDS.toNanos(15), "refused before any wait for "
                    + "the managers would have ended (20 s): " + took / 1_000_000 + " ms");
        }
    }
}
