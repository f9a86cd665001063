package dev.selene.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import dev.selene.actors.api.CacheSettings;
import dev.selene.actors.api.SettingsException;
import dev.selene.actors.api.SettingsReader;
import dev.selene.actors.pool.PoolCluster;
import dev.selene.actors.pool.PoolSecurity;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Loads a node's settings: command-line overrides over a user file over every {@code reference.conf} (the
 * cache's defaults in the library's, the admin server's and the manager's in this module's), then validates
 * every value; the cache's part through {@link CacheSettings}. Any invalid value is a {@link SettingsException}
 * whose message is one line naming the setting and the allowed values, so the node stops at start with that
 * line and nothing else.
 */
public final class SettingsLoader {

    /** The root of every Selene setting. */
    public static final String ROOT = CacheSettings.ROOT;

    /** A seed node: {@code host:port}, or the full address of a member of the pool's actor system. */
    private static final Pattern SEED = Pattern.compile("(pekko://" + PoolCluster.SYSTEM_NAME
            + "@)?[^:/@\\s]+:\\d{1,5}");

    private SettingsLoader() {
    }

    /**
     * The settings from {@code file} (null: defaults only) with {@code overrides} (setting path → value, e.g.
     * {@code selene.warm → 4g}; a list setting takes a {@link List}) on top.
     */
    public static NodeSettings load(Path file, Map<String, ?> overrides) {
        return load(file, overrides, Map.of());
    }

    /**
     * The settings from {@code file} with {@code overrides} on top, where {@code commandDefaults} (setting path →
     * value) replace the {@code reference.conf} defaults of the command that loads them ({@code selene serve}'s
     * smaller warm tier), under the file and the flags.
     */
    public static NodeSettings load(Path file, Map<String, ?> overrides, Map<String, ?> commandDefaults) {
        Config user = ConfigFactory.empty();
        String source = "defaults";
        if (file != null) {
            if (!Files.isRegularFile(file)) {
                throw new SettingsException("--config '" + file + "' is invalid; allowed: a readable HOCON file");
            }
            if (!Files.isReadable(file)) {
                throw new SettingsException("--config '" + file + "' is invalid: it cannot be read (permission "
                        + "denied); allowed: a readable HOCON file");
            }
            try {
                user = ConfigFactory.parseFile(file.toFile(), ConfigParseOptions.defaults().setAllowMissing(false));
            } catch (ConfigException e) {
                throw new SettingsException("--config '" + file + "' cannot be parsed: " + oneLine(e.getMessage()));
            }
            for (String key : user.root().keySet()) {
                if (!key.equals(ROOT)) {
                    // A misspelled root ("selen { }") or settings without their root ("warm = 8g") would otherwise be
                    // dropped without a word, and the node would start on the defaults.
                    throw new SettingsException("--config '" + file + "' sets '" + key + "' outside selene { }; "
                            + "allowed: settings under selene, e.g. selene { warm = 8g }");
                }
            }
            source = file.toString();
        }
        Config flags = ConfigFactory.parseMap(overrides == null ? Map.of() : overrides, "command line");
        Config ref = ConfigFactory.parseResources(SettingsLoader.class, "/reference.conf").resolve();
        Config all;
        try {
            checkKnown(user, ref);
            checkKnown(flags, ref);
            Config defaults = ConfigFactory.parseMap(commandDefaults, "defaults of the command");
            checkKnown(defaults, ref);
            all = flags.withFallback(user).withFallback(defaults).withFallback(ConfigFactory.defaultReference())
                    .resolve(ConfigResolveOptions.defaults().setAllowUnresolved(false));
        } catch (ConfigException e) {
            throw new SettingsException("settings cannot be resolved: " + oneLine(e.getMessage()));
        }
        return fromConfig(all, source);
    }

    /** Settings only a cache node reads: a pool manager's settings file that sets one was written for a node. */
    private static final List<String> NODE_ONLY = List.of("warm", "concurrency", "host-budget",
            "transfer-window-slots", "device", "disk", "pool.managers", "prefix-cache", "policy");

    /**
     * Refuses, in one line, a settings file written for the other command: {@code selene.manager.*} in a cache node's
     * ({@code forManager} false), or a cache node's own settings (the warm tier, the disk, the pool's managers, ...)
     * in a pool manager's. Either would start, ignoring most of what the file says.
     */
    public static void checkFileIsFor(Path file, boolean forManager) {
        if (file == null) {
            return;
        }
        Config c = ConfigFactory.parseFile(file.toFile()); // parsed and checked by load already
        if (!forManager && c.hasPath(ROOT + ".manager")) {
            throw new SettingsException("--config '" + file + "' sets selene.manager.*, a pool manager's settings: "
                    + "start a manager with selene manager; a cache node's file leaves them out");
        }
        if (forManager && c.hasPath(ROOT + ".admin.port")) {
            throw new SettingsException("--config '" + file + "' sets selene.admin.port, a cache node's admin port: a "
                    + "pool manager's is selene.manager.admin-port");
        }
        if (forManager) {
            for (String key : NODE_ONLY) {
                if (c.hasPath(ROOT + "." + key)) {
                    throw new SettingsException("--config '" + file + "' sets selene." + key + ", a cache node's "
                            + "setting: start a node with selene serve; a pool manager's file leaves it out");
                }
            }
        }
    }

    /** Validates the {@code selene} section of a resolved configuration. */
    public static NodeSettings fromConfig(Config c, String source) {
        CacheConfig cache = CacheSettings.fromConfig(c);
        SettingsReader r = new SettingsReader(c, ROOT);
        return new NodeSettings(cache, admin(r), poolHost(r, c), manager(r, cache.layout()), r.bool("disk.create"),
                source);
    }

    private static PoolHostSettings poolHost(SettingsReader r, Config c) {
        Duration failover = r.duration("pool.failover-after");
        if (failover.toMillis() < 10 || failover.compareTo(Duration.ofMinutes(1)) > 0) {
            throw SettingsException.invalid(r.path("pool.failover-after"), r.raw("pool.failover-after"),
                    "10ms .. 1m, e.g. 500ms");
        }
        Duration join = r.duration("pool.join-timeout");
        if (join.compareTo(Duration.ofSeconds(1)) < 0 || join.compareTo(Duration.ofMinutes(10)) > 0) {
            throw SettingsException.invalid(r.path("pool.join-timeout"), r.raw("pool.join-timeout"),
                    "1s .. 10m, e.g. 20s");
        }
        PoolSecurity security;
        try {
            security = PoolSecurity.from(c);
        } catch (IllegalArgumentException e) {
            throw new SettingsException(e.getMessage());
        }
        return new PoolHostSettings(address(r, "pool.bind"), r.integer("pool.port", 0, 65_535), failover, join,
                security);
    }

    private static String address(SettingsReader r, String setting) {
        String bind = r.string(setting);
        if (bind.isBlank() || bind.contains(" ") || bind.contains("/")) {
            throw SettingsException.invalid(r.path(setting), bind, "an IP address or host name, e.g. 127.0.0.1");
        }
        return bind;
    }

    private static AdminSettings admin(SettingsReader r) {
        String bind = address(r, "admin.bind");
        int port = r.integer("admin.port", 0, 65_535);
        String token = r.string("admin.token");
        // a token of spaces only would otherwise be trimmed to none: mutating requests refused, with no word why
        boolean spacesOnly = token.isEmpty() && !r.raw("admin.token").isEmpty();
        if (spacesOnly || token.chars().anyMatch(ch -> ch <= ' ' || ch > '~')) {
            throw SettingsException.invalid(r.path("admin.token"), "(hidden)",
                    "printable ASCII without spaces, or empty to refuse mutating requests");
        }
        long maxBody = r.size("admin.max-body");
        if (maxBody < 1 || maxBody > (64L << 20)) {
            throw SettingsException.invalid(r.path("admin.max-body"), r.raw("admin.max-body"), "1 byte .. 64m");
        }
        Duration interval = r.duration("admin.sample-interval");
        if (interval.toMillis() < 50 || interval.compareTo(Duration.ofHours(1)) > 0) {
            throw SettingsException.invalid(r.path("admin.sample-interval"), r.raw("admin.sample-interval"),
                    "50ms .. 1h");
        }
        Duration history = r.duration("admin.history");
        if (history.compareTo(interval) < 0 || history.compareTo(Duration.ofDays(1)) > 0) {
            throw SettingsException.invalid(r.path("admin.history"), r.raw("admin.history"),
                    "at least selene.admin.sample-interval and at most 1d");
        }
        return new AdminSettings(bind, port, token, maxBody, interval, history);
    }

    private static ManagerSettings manager(SettingsReader r, Layout layout) {
        String bind = address(r, "manager.bind");
        int port = r.integer("manager.port", 0, 65_535);
        List<String> seeds = r.strings("manager.seeds");
        for (String s : seeds) {
            if (!SEED.matcher(s).matches() || !SettingsReader.hasPortInRange(s)) {
                throw SettingsException.invalid(r.path("manager.seeds"), s,
                        "manager addresses such as host:7355 or pekko://" + PoolCluster.SYSTEM_NAME + "@host:7355, "
                                + "ports 1..65535");
            }
        }
        long store = r.size("manager.store-size");
        long record = (long) layout.slotsPerRecord(true) * layout.slotBytes();
        if (store < record) {
            throw SettingsException.invalid(r.path("manager.store-size"), r.raw("manager.store-size"),
                    "at least one record of selene.layout (" + ByteSize.format(record) + "), e.g. 64g");
        }
        int replicas = r.integer("manager.replicas", 1, 3);
        int adminPort = r.integer("manager.admin-port", 0, 65_535);
        int dataPort = r.integer("manager.data-port", 0, 65_535);
        return new ManagerSettings(bind, port, seeds, store, r.durationOrOff("manager.max-age"), replicas,
                adminPort, dataPort);
    }

    /**
     * Rejects keys under {@code selene} that no setting has, and a plain value where the defaults have an object
     * of settings ({@code selene = "x"}, {@code selene.disk = 1}): a typo must not silently fall back to a default,
     * and a value in an object's place would hide every default under it. Each layer (the file, the flags) is
     * checked on its own, before the layers merge. The known keys are those of every {@code reference.conf} on
     * the class path (the library's and this module's); {@code selene.layout} may also be an object of its own.
     */
    private static void checkKnown(Config layer, Config ref) {
        ConfigValue root = layer.root().get(ROOT);
        if (root != null) {
            checkObject(ROOT, root, (ConfigObject) ref.root().get(ROOT));
        }
    }

    private static void checkObject(String path, ConfigValue value, ConfigObject known) {
        if (value.valueType() != ConfigValueType.OBJECT) {
            throw SettingsException.invalid(path, oneLine(String.valueOf(value.unwrapped())), path.equals(ROOT)
                    ? "an object of settings, e.g. selene { warm = 8g }" : "an object of settings: " + keys(known));
        }
        for (Map.Entry<String, ConfigValue> e : ((ConfigObject) value).entrySet()) {
            String key = path + "." + ConfigUtil.joinPath(e.getKey());
            ConfigValue k = known.get(e.getKey());
            if (k == null) {
                throw new SettingsException(key + " is not a setting; allowed: " + keys(known)
                        + " (see docs/settings.md)");
            }
            if (key.equals(ROOT + ".manager.access")) {
                // A map of the operator's own keys (certificate identities), checked where it is read.
                if (e.getValue().valueType() != ConfigValueType.OBJECT) {
                    throw SettingsException.invalid(key, oneLine(String.valueOf(e.getValue().unwrapped())),
                            "an object of certificate identities to lists of namespaces, e.g. { \"host-a\" = "
                                    + "[\"tenant-a\"] } (a certificate's common name, or a prefix ending in *)");
                }
            } else if (k.valueType() == ConfigValueType.OBJECT) {
                checkObject(key, e.getValue(), (ConfigObject) k);
            }
        }
    }

    /** The keys of an object of settings, an object among them as {@code name.*}. */
    private static String keys(ConfigObject known) {
        Set<String> out = new TreeSet<>();
        known.forEach((k, v) -> out.add(v.valueType() == ConfigValueType.OBJECT ? k + ".*" : k));
        return String.join(", ", out);
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replaceAll("\\s*\\R\\s*", " ");
    }
}
