package dev.selene.node.config;

import dev.selene.actors.api.SettingsException;
import dev.selene.engine.config.CacheConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A node's settings: reference defaults, the example files, flag overrides, unknown keys and one-line errors. The
 * cache's own keys are validated by the library ({@code CacheSettingsTest}); here only that their errors reach
 * the node unchanged.
 */
class SettingsLoaderTest {

    /** The repository's config/ folder (tests run in the module directory). */
    static final Path CONFIG_DIR = Path.of("..", "config");

    private static NodeSettings load(Map<String, String> flags) {
        return SettingsLoader.load(null, flags);
    }

    private static String error(Path file, Map<String, ?> flags) {
        SettingsException e = assertThrows(SettingsException.class, () -> SettingsLoader.load(file, flags));
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        return e.getMessage();
    }

    @Test
    void defaults_areAMemoryOnlyNodeOnLoopbackWithMaxAgeOff() {
        NodeSettings s = load(Map.of());
        CacheConfig c = s.cache();
        assertEquals("deepseek-tp4", c.layout().name());
        assertEquals(1L << 30, c.warmBytes());
        assertEquals(32, c.concurrency());
        assertNull(c.maxAge());
        assertFalse(c.drainOnShutdown());
        assertNull(c.diskDir());
        assertEquals("memory-only", s.shape());
        assertEquals("127.0.0.1", s.admin().bind());
        assertFalse(s.admin().tokenSet());
    }

    @Test
    void everyFileInConfig_loadsAndHasTheShapeItIsNamedFor() throws IOException {
        Map<String, String> shapes = Map.of("memory-only.conf", "memory-only", "disk-only.conf", "disk-only",
                "memory-disk.conf", "memory+disk", "pool.conf", "pool", "warm-pool.conf", "memory+pool",
                "disk-pool.conf", "disk+pool", "warm-disk-pool.conf", "memory+disk+pool",
                "manager.conf", "memory-only");
        List<Path> files;
        try (var list = Files.list(CONFIG_DIR)) {
            files = list.filter(f -> f.toString().endsWith(".conf")).sorted().toList();
        }
        assertEquals(new TreeSet<>(shapes.keySet()), files.stream().map(f -> f.getFileName().toString())
                .collect(Collectors.toCollection(TreeSet::new)), "every file in config/ has its shape here");
        for (Path f : files) {
            NodeSettings s = SettingsLoader.load(f, Map.of());
            assertEquals(shapes.get(f.getFileName().toString()), s.shape(), f.toString());
        }
        NodeSettings disk = SettingsLoader.load(CONFIG_DIR.resolve("disk-only.conf"), Map.of());
        assertEquals(0, disk.cache().warmBytes());
        assertEquals(500L << 30, disk.cache().diskBytes());
        assertEquals(Duration.ofHours(24), disk.cache().maxAge());
        assertTrue(disk.cache().drainOnShutdown());
        NodeSettings pool = SettingsLoader.load(CONFIG_DIR.resolve("pool.conf"), Map.of());
        assertEquals(List.of("pool-manager-1:7355", "pool-manager-2:7355"), pool.poolManagers());
        assertTrue(pool.cache().poolEnabled());
        assertEquals(0, pool.cache().warmBytes());
        assertEquals("gpu-host-1", pool.poolHost().bind());
        assertEquals(7357, pool.poolHost().port());
        // The multi-host examples run mutual TLS on both planes.
        assertTrue(pool.poolHost().security().tls());
        assertEquals(java.nio.file.Path.of("/etc/selene/tls/gpu-host-1.crt"),
                pool.poolHost().security().files().certificate());
        NodeSettings warmPool = SettingsLoader.load(CONFIG_DIR.resolve("warm-pool.conf"), Map.of());
        assertEquals(8L << 30, warmPool.cache().warmBytes());
        assertTrue(warmPool.cache().poolEnabled());
        ManagerSettings m = SettingsLoader.load(CONFIG_DIR.resolve("manager.conf"), Map.of()).manager();
        assertEquals("pool-manager-1", m.bind());
        assertEquals(7355, m.port());
        assertEquals(List.of("pool-manager-1:7355", "pool-manager-2:7355"), m.seeds());
        assertEquals(64L << 30, m.storeBytes());
        assertEquals(Duration.ofHours(24), m.maxAge());
        assertEquals(2, m.replicas());
        assertEquals(7356, m.adminPort());
        assertEquals(7357, m.dataPort());
        NodeSettings manager = SettingsLoader.load(CONFIG_DIR.resolve("manager.conf"), Map.of());
        assertTrue(manager.poolHost().security().tls());
        assertTrue(manager.poolHost().security().namespaceAccess().allows("gpu-host-1", "deepseek-prod"));
        assertFalse(manager.poolHost().security().namespaceAccess().allows("gpu-host-1", "deepseek-eval"));
        assertTrue(manager.poolHost().security().namespaceAccess().allows("pool-manager-2", "deepseek-eval"));
    }

    @Test
    void managerDefaults_andFlags() {
        ManagerSettings d = load(Map.of()).manager();
        assertEquals(new ManagerSettings("127.0.0.1", 7355, List.of(), 64L << 30, null, 2, 7356, 0), d);
        ManagerSettings m = SettingsLoader.load(null, Map.of("selene.manager.seeds",
                List.of("10.0.0.1:7355", "pekko://selene@10.0.0.2:7355"), "selene.manager.replicas", "3",
                "selene.manager.admin-port", "0", "selene.manager.max-age", "2h")).manager();
        assertEquals(List.of("10.0.0.1:7355", "pekko://selene@10.0.0.2:7355"), m.seeds());
        assertEquals(3, m.replicas());
        assertEquals(0, m.adminPort());
        assertEquals(Duration.ofHours(2), m.maxAge());
    }

    @Test
    void flags_overrideTheFile() {
        NodeSettings s = SettingsLoader.load(CONFIG_DIR.resolve("memory-disk.conf"), Map.of(
                "selene.warm", "2g", "selene.prefix-cache.max-age", "90m", "selene.admin.port", "0",
                "selene.prefix-cache.drain-on-shutdown", "false", "selene.layout", "qwen-tp1",
                "selene.disk.dir", "/tmp/x", "selene.admin.token", "s3cret-token"));
        assertEquals(2L << 30, s.cache().warmBytes());
        assertEquals(Duration.ofMinutes(90), s.cache().maxAge());
        assertEquals(0, s.admin().port());
        assertFalse(s.cache().drainOnShutdown());
        assertEquals("qwen-tp1", s.cache().layout().name());
        assertEquals("/tmp/x", s.cache().diskDir());
        assertEquals("s3cret-token", s.admin().token());
    }

    @Test
    void invalidValues_areOneLineNamingTheSettingAndTheAllowedValues() {
        assertEquals("selene.prefix-cache.max-age = 'abc' is invalid; allowed: a duration such as 30m, 2h or 7d, "
                + "or off", error(null, Map.of("selene.prefix-cache.max-age", "abc")));
        assertTrue(error(null, Map.of("selene.admin.port", "70000")).contains("selene.admin.port"));
        assertTrue(error(null, Map.of("selene.admin.history", "1s")).startsWith("selene.admin.history = '1s'"));
        assertTrue(error(null, Map.of("selene.manager.seeds", "x")).contains("selene.manager.seeds"));
        assertEquals("selene.manager.seeds = 'pekko://other@h:1' is invalid; allowed: manager addresses such as "
                + "host:7355 or pekko://selene@host:7355, ports 1..65535", error(null, Map.of("selene.manager.seeds",
                List.of("pekko://other@h:1"))));
        for (String port : List.of("0", "99999")) {
            assertEquals("selene.manager.seeds = 'h:" + port + "' is invalid; allowed: manager addresses such as "
                    + "host:7355 or pekko://selene@host:7355, ports 1..65535",
                    error(null, Map.of("selene.manager.seeds", List.of("h:" + port))));
        }
        assertEquals("selene.manager.replicas = '4' is invalid; allowed: an integer in 1..3",
                error(null, Map.of("selene.manager.replicas", "4")));
        assertTrue(error(null, Map.of("selene.manager.store-size", "1m"))
                .startsWith("selene.manager.store-size = '1m' is invalid; allowed: at least one record of selene.layout"));
        assertTrue(error(null, Map.of("selene.manager.admin-port", "-1")).startsWith("selene.manager.admin-port"));
        assertTrue(error(null, Map.of("selene.pool.port", "70000")).startsWith("selene.pool.port"));
        assertTrue(error(null, Map.of("selene.pool.bind", "a b")).startsWith("selene.pool.bind"));
        assertEquals("selene.pool.failover-after = '2m' is invalid; allowed: 10ms .. 1m, e.g. 500ms",
                error(null, Map.of("selene.pool.failover-after", "2m")));
        assertEquals(Duration.ofMillis(250), SettingsLoader.load(null, Map.of("selene.pool.failover-after",
                "250ms")).poolHost().failoverAfter());
        assertEquals("selene.pool.join-timeout = '500ms' is invalid; allowed: 1s .. 10m, e.g. 20s",
                error(null, Map.of("selene.pool.join-timeout", "500ms")));
        assertEquals(Duration.ofSeconds(3), SettingsLoader.load(null, Map.of("selene.pool.join-timeout", "3s"))
                .poolHost().joinTimeout());
        assertEquals(Duration.ofSeconds(20), SettingsLoader.load(null, Map.of()).poolHost().joinTimeout());
    }

    @Test
    void unknownSettingsAndBrokenFiles_areRefused(@TempDir Path dir) throws IOException {
        Path typo = Files.writeString(dir.resolve("typo.conf"), "selene { wram = 4g }");
        assertTrue(error(typo, Map.of()).startsWith("selene.wram is not a setting"));
        Path broken = Files.writeString(dir.resolve("broken.conf"), "selene { warm = ");
        assertTrue(error(broken, Map.of()).contains("cannot be parsed"));
        assertTrue(error(dir.resolve("missing.conf"), Map.of()).contains("--config"));
    }

    @Test
    void keysOutsideSelene_areRefusedNamingThem_notDroppedForTheDefaults(@TempDir Path dir) throws IOException {
        assertEquals("--config '" + dir.resolve("typo.conf") + "' sets 'selen' outside selene { }; allowed: settings "
                + "under selene, e.g. selene { warm = 8g }", error(Files.writeString(dir.resolve("typo.conf"),
                "selen { warm = 64m }"), Map.of()));
        assertTrue(error(Files.writeString(dir.resolve("bare.conf"), "warm = 64m"), Map.of())
                .contains("sets 'warm' outside selene { }"));
        assertTrue(error(Files.writeString(dir.resolve("pekko.conf"), "pekko.actor.provider = cluster"), Map.of())
                .contains("sets 'pekko' outside selene { }"));
    }

    @Test
    void anUnreadableFile_isRefusedSayingSo_notAsUnparseable(@TempDir Path dir) throws IOException {
        Path f = Files.writeString(dir.resolve("unread.conf"), "selene { warm = 64m }");
        assumeTrue(f.toFile().setReadable(false, false) && !Files.isReadable(f), "root reads any file");
        assertEquals("--config '" + f + "' is invalid: it cannot be read (permission denied); allowed: a readable "
                + "HOCON file", error(f, Map.of()));
    }

    @Test
    void aPlainValueWhereAnObjectOfSettingsBelongs_isRefusedNamingIt(@TempDir Path dir) throws IOException {
        Path root = Files.writeString(dir.resolve("root.conf"), "selene = \"x\"");
        String expected = "selene = 'x' is invalid; allowed: an object of settings, e.g. selene { warm = 8g }";
        assertEquals(expected, error(root, Map.of()));
        assertEquals(expected, error(root, Map.of("selene.layout", "small", "selene.warm", "8m",
                "selene.admin.port", "0")), "flags on top must not hide the file's value");
        Path disk = Files.writeString(dir.resolve("disk.conf"), "selene.disk = 1");
        assertEquals("selene.disk = '1' is invalid; allowed: an object of settings: create, dir, size",
                error(disk, Map.of("selene.disk.dir", "/tmp/x")));
        assertTrue(error(null, Map.of("selene.disk.typo", "1")).startsWith("selene.disk.typo is not a setting; "
                + "allowed: create, dir, size"));
        Path access = Files.writeString(dir.resolve("access.conf"), "selene.manager.access = 5");
        assertEquals("selene.manager.access = '5' is invalid; allowed: an object of certificate identities to lists "
                + "of namespaces, e.g. { \"host-a\" = [\"tenant-a\"] } (a certificate's common name, or a prefix "
                + "ending in *)", error(access, Map.of()));
    }

    @Test
    void aSettingsFileWrittenForTheOtherCommand_isRefusedNamingWhatGivesItAway() throws IOException {
        Path manager = Path.of("../config/manager.conf");
        SettingsException node = assertThrows(SettingsException.class,
                () -> SettingsLoader.checkFileIsFor(manager, false));
        assertEquals("--config '../config/manager.conf' sets selene.manager.*, a pool manager's settings: start a "
                + "manager with selene manager; a cache node's file leaves them out", node.getMessage());
        SettingsException forManager = assertThrows(SettingsException.class,
                () -> SettingsLoader.checkFileIsFor(Path.of("../config/warm-pool.conf"), true));
        assertEquals("--config '../config/warm-pool.conf' sets selene.warm, a cache node's setting: start a node with "
                + "selene serve; a pool manager's file leaves it out", forManager.getMessage());
        SettingsLoader.checkFileIsFor(manager, true);
        Path adminPort = Files.writeString(Files.createTempFile("manager", ".conf"), "selene.admin.port = 9000");
        try {
            assertEquals("--config '" + adminPort + "' sets selene.admin.port, a cache node's admin port: a pool "
                    + "manager's is selene.manager.admin-port", assertThrows(SettingsException.class,
                    () -> SettingsLoader.checkFileIsFor(adminPort, true)).getMessage());
        } finally {
            Files.delete(adminPort);
        }
        try (var files = Files.list(Path.of("../config"))) {
            for (Path f : files.filter(f -> f.toString().endsWith(".conf") && !f.equals(manager)).toList()) {
                SettingsLoader.checkFileIsFor(f, false); // every shipped node file is taken by a node
            }
        }
    }

    @Test
    void anAdminTokenWithSpaces_orOfSpacesOnly_isRefused_neverTakenAsNone() {
        String expected = "selene.admin.token = '(hidden)' is invalid; allowed: printable ASCII without spaces, or "
                + "empty to refuse mutating requests";
        assertEquals(expected, error(null, Map.of("selene.admin.token", "a b")));
        assertEquals(expected, error(null, Map.of("selene.admin.token", " ")));
        assertFalse(load(Map.of("selene.admin.token", "")).admin().tokenSet(), "empty: no token, as documented");
    }

    @Test
    void diskCreate_isOffByDefault_andOnWithTheFlagOrTheSetting() {
        assertFalse(load(Map.of()).createDiskDir());
        assertTrue(load(Map.of("selene.disk.create", "true")).createDiskDir());
        NodeOptions flags = CommandLine.populateCommand(new NodeOptions(), "--create-disk-dir", "--disk-dir", "/x");
        assertEquals(Map.of("selene.disk.create", "true", "selene.disk.dir", "/x"), flags.overrides());
        assertFalse(CommandLine.populateCommand(new NodeOptions()).overrides().containsKey("selene.disk.create"));
        assertEquals("selene.disk.create = 'maybe' is invalid; allowed: true or false",
                error(null, Map.of("selene.disk.create", "maybe")));
    }

    @Test
    void aCustomLayoutObjectInAFile_isNotAnUnknownSetting(@TempDir Path dir) throws IOException {
        Path f = Files.writeString(dir.resolve("custom.conf"), "selene.layout { ranks = 2, page-bytes = 64k, "
                + "row-bytes = 128k, pages-per-record = 8, tokens-per-page = 64 }");
        NodeSettings s = SettingsLoader.load(f, Map.of());
        assertEquals("custom", s.cache().layout().name());
        assertEquals(512, s.cache().layout().tokensPerRecord());
    }
}
