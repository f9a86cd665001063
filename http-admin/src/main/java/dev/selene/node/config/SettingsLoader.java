package dev.selene.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Loads a node's settings (DESIGN §7): command-line overrides over a user file over {@code reference.conf}, then
 * validates every value. Any invalid value is a {@link SettingsException} whose message is one line naming the
 * setting and the allowed values, so the node stops at start with that line and nothing else.
 */
public final class SettingsLoader {

    /** The root of every Selene setting. */
    public static final String ROOT = "selene";

    private static final String SIZE = "a size such as 0, 4096, 512m, 8g or 1.5GiB";
    private static final String DURATION_OR_OFF = "a duration such as 30m, 2h or 7d, or off";
    private static final String LAYOUT_FIELDS = "ranks, page-bytes, row-bytes, pages-per-record, tokens-per-page";

    private SettingsLoader() {
    }

    /**
     * The settings from {@code file} (null: defaults only) with {@code overrides} (setting path → value, e.g.
     * {@code selene.warm → 4g}) on top.
     */
    public static NodeSettings load(Path file, Map<String, String> overrides) {
        Config user = ConfigFactory.empty();
        String source = "defaults";
        if (file != null) {
            if (!Files.isRegularFile(file)) {
                throw new SettingsException("--config '" + file + "' is invalid; allowed: a readable HOCON file");
            }
            try {
                user = ConfigFactory.parseFile(file.toFile(), ConfigParseOptions.defaults().setAllowMissing(false));
            } catch (ConfigException e) {
                throw new SettingsException("--config '" + file + "' cannot be parsed: " + oneLine(e.getMessage()));
            }
            source = file.toString();
        }
        Config flags = ConfigFactory.parseMap(overrides == null ? Map.of() : overrides, "command line");
        Config merged = flags.withFallback(user);
        checkKnown(merged);
        Config all;
        try {
            all = merged.withFallback(ConfigFactory.defaultReference())
                    .resolve(ConfigResolveOptions.defaults().setAllowUnresolved(false));
        } catch (ConfigException e) {
            throw new SettingsException("settings cannot be resolved: " + oneLine(e.getMessage()));
        }
        return fromConfig(all, source);
    }

    /** Validates the {@code selene} section of a resolved configuration. */
    public static NodeSettings fromConfig(Config c, String source) {
        Reader r = new Reader(c);
        Layout layout = layout(c);
        long warm = r.size("warm");
        int concurrency = r.integer("concurrency", 1, 65_536);
        long budget = r.size("host-budget");
        if (budget == 0) {
            throw SettingsException.invalid(path("host-budget"), r.raw("host-budget"), "more than 0 bytes, e.g. 16g");
        }
        int window = r.integer("transfer-window-slots", 0, 1 << 20);
        String device = r.oneOf("device", List.of("auto", "simulated", "cuda"));
        String diskDir = r.string("disk.dir");
        long diskBytes = r.size("disk.size");
        if (diskDir.isEmpty()) {
            diskDir = null;
        } else if (diskBytes < layout.slotsPerRecord(true) * layout.slotBytes()) {
            throw SettingsException.invalid(path("disk.size"), r.raw("disk.size"), "at least one record ("
                    + ByteSize.format(layout.slotsPerRecord(true) * layout.slotBytes())
                    + ") when selene.disk.dir is set, e.g. 100g");
        }
        List<String> managers = r.addresses("pool.managers");
        if (!managers.isEmpty() && warm > 0) {
            throw SettingsException.invalid(path("warm"), r.raw("warm"),
                    "0 when selene.pool.managers is set (a multi-host pool keeps no warm tier, B7)");
        }
        Duration maxAge = r.durationOrOff("prefix-cache.max-age");
        boolean drain = r.bool("prefix-cache.drain-on-shutdown");
        CacheConfig cache;
        try {
            cache = new CacheConfig(layout, warm, concurrency, window, budget, device, diskDir, diskBytes,
                    !managers.isEmpty(), maxAge, drain);
        } catch (IllegalArgumentException e) {
            throw new SettingsException("selene: " + e.getMessage());
        }
        return new NodeSettings(cache, admin(r), List.copyOf(managers), manager(r), source);
    }

    private static AdminSettings admin(Reader r) {
        String bind = r.string("admin.bind");
        if (bind.isBlank() || bind.contains(" ") || bind.contains("/")) {
            throw SettingsException.invalid(path("admin.bind"), bind, "an IP address or host name, e.g. 127.0.0.1");
        }
        int port = r.integer("admin.port", 0, 65_535);
        String token = r.string("admin.token");
        if (token.chars().anyMatch(ch -> ch <= ' ' || ch > '~')) {
            throw SettingsException.invalid(path("admin.token"), "(hidden)",
                    "printable ASCII without spaces, or empty to refuse mutating requests");
        }
        long maxBody = r.size("admin.max-body");
        if (maxBody < 1 || maxBody > (64L << 20)) {
            throw SettingsException.invalid(path("admin.max-body"), r.raw("admin.max-body"), "1 byte .. 64m");
        }
        Duration interval = r.duration("admin.sample-interval");
        if (interval.toMillis() < 50 || interval.compareTo(Duration.ofHours(1)) > 0) {
            throw SettingsException.invalid(path("admin.sample-interval"), r.raw("admin.sample-interval"),
                    "50ms .. 1h");
        }
        Duration history = r.duration("admin.history");
        if (history.compareTo(interval) < 0 || history.compareTo(Duration.ofDays(1)) > 0) {
            throw SettingsException.invalid(path("admin.history"), r.raw("admin.history"),
                    "at least selene.admin.sample-interval and at most 1d");
        }
        return new AdminSettings(bind, port, token, maxBody, interval, history);
    }

    private static ManagerSettings manager(Reader r) {
        String bind = r.string("manager.bind");
        if (bind.isBlank()) {
            throw SettingsException.invalid(path("manager.bind"), bind, "an IP address or host name");
        }
        int port = r.integer("manager.port", 0, 65_535);
        List<String> seeds = r.strings("manager.seeds");
        for (String s : seeds) {
            if (!s.matches("pekko://[A-Za-z0-9_-]+@[^:/\\s]+:\\d{1,5}")) {
                throw SettingsException.invalid(path("manager.seeds"), s, "addresses such as pekko://selene@host:7355");
            }
        }
        long store = r.size("manager.store-size");
        if (store == 0) {
            throw SettingsException.invalid(path("manager.store-size"), r.raw("manager.store-size"),
                    "more than 0 bytes, e.g. 64g");
        }
        return new ManagerSettings(bind, port, List.copyOf(seeds), store, r.durationOrOff("manager.max-age"));
    }

    private static Layout layout(Config c) {
        String p = path("layout");
        ConfigValue v = c.getValue(p);
        if (v.valueType() == ConfigValueType.STRING) {
            String name = c.getString(p);
            if (!Layout.PRESETS.contains(name.toLowerCase(Locale.ROOT))) {
                throw SettingsException.invalid(p, name, String.join(", ", Layout.PRESETS) + ", or an object {"
                        + LAYOUT_FIELDS + "}");
            }
            return Layout.preset(name);
        }
        if (v.valueType() != ConfigValueType.OBJECT) {
            throw SettingsException.invalid(p, v.unwrapped(), String.join(", ", Layout.PRESETS) + ", or an object {"
                    + LAYOUT_FIELDS + "}");
        }
        Config l = c.getConfig(p);
        Reader r = new Reader(l, p);
        try {
            return new Layout("custom", r.integer("ranks", 1, 64), (int) r.size("page-bytes"),
                    (int) Math.min(Integer.MAX_VALUE, r.size("row-bytes")), r.integer("pages-per-record", 1, 4096),
                    r.integer("tokens-per-page", 1, 65_536));
        } catch (SettingsException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new SettingsException("selene." + e.getMessage());
        }
    }

    /** Rejects keys under {@code selene} that no setting has: a typo must not silently fall back to a default. */
    private static void checkKnown(Config user) {
        if (!user.hasPath(ROOT)) {
            return;
        }
        Config ref = ConfigFactory.parseResources(SettingsLoader.class, "/reference.conf").resolve();
        Set<String> known = new TreeSet<>();
        ref.getConfig(ROOT).entrySet().forEach(e -> known.add(e.getKey()));
        ConfigValue root = user.root().get(ROOT);
        if (root.valueType() != ConfigValueType.OBJECT) {
            throw new SettingsException("selene must be an object of settings; see docs/settings.md");
        }
        for (Map.Entry<String, ConfigValue> e : user.getConfig(ROOT).entrySet()) {
            String k = e.getKey();
            if (!known.contains(k) && !k.startsWith("layout.")) {
                throw new SettingsException("selene." + k + " is not a setting; allowed: " + topLevel(known)
                        + " (see docs/settings.md)");
            }
        }
    }

    private static String topLevel(Set<String> known) {
        Set<String> out = new TreeSet<>();
        for (String k : known) {
            out.add(k.contains(".") ? k.substring(0, k.indexOf('.')) + ".*" : k);
        }
        return String.join(", ", out);
    }

    private static String path(String setting) {
        return ROOT + "." + setting;
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replaceAll("\\s*\\R\\s*", " ");
    }

    /** Typed reads of settings under a prefix; every failure names the setting. */
    private static final class Reader {
        private final Config c;
        private final String prefix;

        Reader(Config c) {
            this(c, ROOT);
        }

        Reader(Config c, String prefix) {
            this.c = c;
            this.prefix = prefix;
        }

        String full(String setting) {
            return prefix + "." + setting;
        }

        String raw(String setting) {
            String p = key(setting);
            if (!c.hasPathOrNull(p) || c.getIsNull(p)) {
                return "";
            }
            return String.valueOf(c.getValue(p).unwrapped());
        }

        private String key(String setting) {
            return prefix.equals(ROOT) ? full(setting) : setting;
        }

        private void require(String setting, String allowed) {
            if (!c.hasPathOrNull(key(setting)) || c.getIsNull(key(setting))) {
                throw SettingsException.invalid(full(setting), "", allowed);
            }
        }

        int integer(String setting, int min, int max) {
            String allowed = "an integer in " + min + ".." + max;
            require(setting, allowed);
            ConfigValue v = c.getValue(key(setting));
            long n;
            try {
                n = Long.parseLong(String.valueOf(v.unwrapped()).trim());
            } catch (NumberFormatException e) {
                throw SettingsException.invalid(full(setting), v.unwrapped(), allowed);
            }
            if (n < min || n > max) {
                throw SettingsException.invalid(full(setting), n, allowed);
            }
            return (int) n;
        }

        long size(String setting) {
            require(setting, SIZE);
            String text = raw(setting);
            try {
                return ByteSize.parse(full(setting), text);
            } catch (IllegalArgumentException e) {
                throw SettingsException.invalid(full(setting), text, SIZE);
            }
        }

        String string(String setting) {
            require(setting, "a string");
            ConfigValue v = c.getValue(key(setting));
            if (v.valueType() == ConfigValueType.OBJECT || v.valueType() == ConfigValueType.LIST) {
                throw SettingsException.invalid(full(setting), v.unwrapped(), "a string");
            }
            return String.valueOf(v.unwrapped()).trim();
        }

        String oneOf(String setting, List<String> allowed) {
            String v = string(setting).toLowerCase(Locale.ROOT);
            if (!allowed.contains(v)) {
                throw SettingsException.invalid(full(setting), v, String.join(", ", allowed));
            }
            return v;
        }

        boolean bool(String setting) {
            require(setting, "true or false");
            try {
                return c.getBoolean(key(setting));
            } catch (ConfigException e) {
                throw SettingsException.invalid(full(setting), raw(setting), "true or false");
            }
        }

        Duration duration(String setting) {
            require(setting, "a duration such as 500ms, 2s or 10m");
            try {
                Duration d = c.getDuration(key(setting));
                if (d.isNegative() || d.isZero()) {
                    throw SettingsException.invalid(full(setting), raw(setting), "a positive duration");
                }
                return d;
            } catch (ConfigException e) {
                throw SettingsException.invalid(full(setting), raw(setting), "a duration such as 500ms, 2s or 10m");
            }
        }

        Duration durationOrOff(String setting) {
            require(setting, DURATION_OR_OFF);
            String text = raw(setting).trim().toLowerCase(Locale.ROOT);
            if (text.equals("off") || text.equals("false") || text.equals("none") || text.isEmpty()) {
                return null;
            }
            Duration d;
            try {
                d = c.getDuration(key(setting));
            } catch (ConfigException e) {
                throw SettingsException.invalid(full(setting), raw(setting), DURATION_OR_OFF);
            }
            if (d.isNegative() || d.isZero()) {
                throw SettingsException.invalid(full(setting), raw(setting), DURATION_OR_OFF);
            }
            return d;
        }

        List<String> strings(String setting) {
            require(setting, "a list of strings");
            try {
                return new ArrayList<>(c.getStringList(key(setting)));
            } catch (ConfigException e) {
                throw SettingsException.invalid(full(setting), raw(setting), "a list of strings, e.g. [\"a\", \"b\"]");
            }
        }

        List<String> addresses(String setting) {
            List<String> out = strings(setting);
            for (String a : out) {
                if (!a.matches("[^:/\\s]+:\\d{1,5}")) {
                    throw SettingsException.invalid(full(setting), a, "a list of host:port addresses");
                }
            }
            return out;
        }
    }
}
