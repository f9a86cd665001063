package dev.selene.actors.api;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.selene.engine.config.CacheConfig;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The cache's settings: the library's defaults, an application's values over them, and one-line errors. */
class CacheSettingsTest {

    /** The cache settings of {@code hocon} over the library's reference defaults. */
    private static CacheConfig read(String hocon) {
        return CacheSettings.fromConfig(withDefaults(ConfigFactory.parseString(hocon)));
    }

    private static CacheConfig read(Map<String, String> values) {
        return CacheSettings.fromConfig(withDefaults(ConfigFactory.parseMap(values)));
    }

    private static Config withDefaults(Config user) {
        return user.withFallback(ConfigFactory.defaultReference()).resolve();
    }

    private static String error(Map<String, String> values) {
        SettingsException e = assertThrows(SettingsException.class, () -> read(values));
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        return e.getMessage();
    }

    private static String error(String hocon) {
        SettingsException e = assertThrows(SettingsException.class, () -> read(hocon));
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        return e.getMessage();
    }

    @Test
    void defaults_areAMemoryOnlyCacheWithMaxAgeOff() {
        CacheConfig c = CacheSettings.load();
        assertEquals("deepseek-tp4", c.layout().name());
        assertEquals(1L << 30, c.warmBytes(), "small: an embedder who sets nothing maps about 1.4 GiB");
        assertEquals(32, c.concurrency());
        assertEquals(16L << 30, c.hostBudgetBytes());
        assertEquals("auto", c.device());
        assertNull(c.maxAge());
        assertFalse(c.drainOnShutdown());
        assertNull(c.diskDir());
        assertFalse(c.poolEnabled());
    }

    @Test
    void anApplicationsValues_overrideTheDefaults() {
        CacheConfig c = read("selene { warm = 2g, layout = qwen-tp1, disk { dir = /tmp/x, size = 100g }, "
                + "prefix-cache { max-age = 90m, drain-on-shutdown = true }, admin.port = 1 }");
        assertEquals(2L << 30, c.warmBytes());
        assertEquals("qwen-tp1", c.layout().name());
        assertEquals("/tmp/x", c.diskDir());
        assertEquals(100L << 30, c.diskBytes());
        assertEquals(Duration.ofMinutes(90), c.maxAge());
        assertTrue(c.drainOnShutdown());
    }

    @Test
    void maxAgeOff_inAnySpelling_isNull() {
        for (String off : List.of("off", "none", "false")) {
            assertNull(read(Map.of("selene.prefix-cache.max-age", off)).maxAge(), off);
        }
        assertEquals(Duration.ofDays(7), read(Map.of("selene.prefix-cache.max-age", "7d")).maxAge());
    }

    @Test
    void invalidValues_areOneLineNamingTheSettingAndTheAllowedValues() {
        assertEquals("selene.prefix-cache.max-age = 'abc' is invalid; allowed: a duration such as 30m, 2h or 7d, "
                + "or off", error(Map.of("selene.prefix-cache.max-age", "abc")));
        assertTrue(error(Map.of("selene.warm", "lots")).startsWith("selene.warm = 'lots' is invalid; allowed: a size"));
        assertTrue(error(Map.of("selene.concurrency", "0"))
                .contains("selene.concurrency = '0' is invalid; allowed: an integer in 1..65536"));
        assertTrue(error(Map.of("selene.host-budget", "0")).startsWith("selene.host-budget = '0' is invalid"));
        assertTrue(error(Map.of("selene.layout", "llama")).contains("allowed: deepseek-tp4, qwen-tp1, small"));
        assertTrue(error(Map.of("selene.device", "tpu")).contains("allowed: auto, simulated, cuda"));
        assertTrue(error(Map.of("selene.disk.dir", "/tmp/d", "selene.disk.size", "0")).contains("selene.disk.size"));
        assertTrue(error(Map.of("selene.prefix-cache.drain-on-shutdown", "maybe")).contains("true or false"));
        assertTrue(error("selene.pool.managers = [\"no-port\"]").startsWith("selene.pool.managers = 'no-port'"));
        assertEquals("selene.pool.managers = 'm1:99999' is invalid; allowed: a list of host:port addresses, ports "
                + "1..65535", error("selene.pool.managers = [\"m1:99999\"]"));
    }

    @Test
    void aWarmTierTheHostBudgetCannotHoldBesideTheSmallestIntake_isOneLineNamingBoth() {
        // issue 26: --warm 30g under the 16 GiB budget was accepted with a self-contradicting warning, then failed
        assertEquals("selene.warm = '30g' is invalid: the warm tier and the smallest intake (two transfer windows, "
                + "16 MiB) do not fit the host budget of 16384 MiB; allowed: a warm tier of at most 16368 MiB, or a "
                + "larger selene.host-budget", error(Map.of("selene.warm", "30g")));
        assertEquals(16368L << 20, read(Map.of("selene.warm", "16368m")).warmBytes(), "the largest it names fits");
        assertTrue(error(Map.of("selene.warm", "16369m")).startsWith("selene.warm = '16369m' is invalid: "));
        assertEquals(30L << 30, read(Map.of("selene.warm", "30g", "selene.host-budget", "31g")).warmBytes());
    }

    @Test
    void valuesThatWouldBeRoundedOrClampedToSomethingElse_areRefused_notQuietlyChanged() {
        assertEquals("selene.warm = '0.0001k' is invalid; allowed: a size such as 0, 4096, 512m, 8g or 1.5GiB",
                error(Map.of("selene.warm", "0.0001k")), "under one byte: it would be 0");
        assertEquals("selene.warm = '100' is invalid; allowed: 0 (no warm tier) or at least one slot of "
                + "selene.layout (256.0 KiB)", error(Map.of("selene.warm", "100")), "no slot at all: no warm tier");
        for (String age : new String[]{"1ns", "999us", "99999999999999d", "3651d"}) {
            assertEquals("selene.prefix-cache.max-age = '" + age + "' is invalid; allowed: a duration from 1ms to "
                    + "3650d, or off", error(Map.of("selene.prefix-cache.max-age", age)));
        }
        assertEquals(java.time.Duration.ofMillis(1), read(Map.of("selene.prefix-cache.max-age", "1ms")).maxAge());
        assertEquals("selene.prefix-cache.max-age = '24' is invalid; allowed: a duration such as 30m, 2h or 7d, or off "
                + "(with its unit: a number alone would be milliseconds)", error("selene.prefix-cache.max-age = 24"));
        assertTrue(error(Map.of("selene.prefix-cache.max-age", "5")).contains("a number alone would be milliseconds"));
        assertEquals(0, read(Map.of("selene.warm", "0")).warmBytes());
    }

    @Test
    void aBudgetOrATransferWindowTooSmallOrLargeForTheSmallestIntake_isBlamedItself_notTheWarmTier() {
        assertEquals("selene.host-budget = '1e3' is invalid: two transfer windows of 31 slots (15.5 MiB) do not fit "
                + "the host budget of 1000 B; allowed: at least 15.5 MiB (the warm tier comes on top), e.g. 16g",
                error(Map.of("selene.host-budget", "1e3", "selene.warm", "0")));
        assertEquals("selene.transfer-window-slots = '1048576' is invalid: two transfer windows of 1048576 slots "
                + "(512.0 GiB) do not fit the host budget of 16.0 GiB; allowed: at most 32768 slots, or 0 for one "
                + "record's slots", error(Map.of("selene.transfer-window-slots", "1048576")));
    }

    @Test
    void thePolicy_isWorthByDefault_andLruOrReuseWhenSet_andAnythingElseIsOneLine() {
        assertEquals("worth", CacheSettings.load().policy());
        assertEquals("lru", read(Map.of("selene.policy", "lru")).policy());
        assertEquals("reuse", read(Map.of("selene.policy", "reuse")).policy());
        assertEquals("selene.policy = 'fifo' is invalid; allowed: lru, reuse, worth",
                error(Map.of("selene.policy", "fifo")));
    }

    @Test
    void poolManagers_areKeptInOrder_withOrWithoutAWarmTier() {
        CacheConfig warm = read("selene { warm = 4g, pool.managers = [\"m1:7355\", \"m2:7355\"] }");
        assertEquals(List.of("m1:7355", "m2:7355"), warm.poolManagers());
        assertTrue(warm.poolEnabled());
        assertEquals(0, read("selene { warm = 0, pool.managers = [\"m1:7355\"] }").warmBytes());
        assertFalse(read("selene.warm = 1g").poolEnabled());
    }

    @Test
    void aCustomLayoutObject_isAccepted_andItsFieldsValidated() {
        CacheConfig c = read("selene.layout { ranks = 2, page-bytes = 64k, row-bytes = 128k, pages-per-record = 8, "
                + "tokens-per-page = 64 }");
        assertEquals("custom", c.layout().name());
        assertEquals(512, c.layout().tokensPerRecord());
        assertTrue(error("selene.layout { ranks = 2, page-bytes = 1000, row-bytes = 0, pages-per-record = 8, "
                + "tokens-per-page = 64 }").startsWith("selene.layout.page-bytes"));
        assertEquals("selene.layout.page-bytes is not set; a layout of its own sets each of ranks, page-bytes, "
                + "row-bytes, pages-per-record, tokens-per-page", error("selene.layout { ranks = 2 }"));
        assertEquals("selene.layout.extra is not a setting; allowed: ranks, page-bytes, row-bytes, pages-per-record, "
                + "tokens-per-page", error("selene.layout { ranks = 2, page-bytes = 64k, row-bytes = 128k, "
                + "pages-per-record = 8, tokens-per-page = 64, extra = 1 }"));
    }

    @Test
    void theLibrarysReferenceConf_setsNothingUnderPekkoButItsDispatcher() throws Exception {
        URI classes = CacheSettings.class.getProtectionDomain().getCodeSource().getLocation().toURI();
        Config library = ConfigFactory.parseURL(classes.resolve("reference.conf").toURL());
        assertTrue(library.hasPath("selene.layout"), "the library's own reference.conf");
        assertFalse(library.hasPath("pekko"), "the library leaves pekko.* to the application");
        assertEquals("thread-pool-executor", library.getString("selene.blocking-dispatcher.executor"));
    }

    @Test
    void standaloneSystemConfig_logsThroughSlf4j_andSetsMinimumRunnable() {
        Config c = CacheSettings.standaloneSystemConfig();
        assertEquals(List.of("org.apache.pekko.event.slf4j.Slf4jLogger"), c.getStringList("pekko.loggers"));
        assertEquals(2, c.getInt("pekko.actor.default-dispatcher.fork-join-executor.minimum-runnable"));
        assertEquals(16, c.getInt("selene.blocking-dispatcher.thread-pool-executor.fixed-pool-size"));
    }

    @Test
    void standaloneSystemConfig_yieldsToTheApplicationsOwnSettings() {
        String key = "pekko.actor.default-dispatcher.fork-join-executor.parallelism-max";
        System.setProperty(key, "7");
        ConfigFactory.invalidateCaches();
        try {
            assertEquals(7, CacheSettings.standaloneSystemConfig().getInt(key));
        } finally {
            System.clearProperty(key);
            ConfigFactory.invalidateCaches();
        }
        assertEquals(4, CacheSettings.standaloneSystemConfig().getInt(key));
    }
}
