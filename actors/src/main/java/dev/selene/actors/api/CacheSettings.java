package dev.selene.actors.api;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.intake.IntakeSizing;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.policy.Policies;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The cache's settings, read from the {@code selene} section of a Typesafe Config and validated into a
 * {@link CacheConfig}. The defaults live in this library's {@code reference.conf}; an application that embeds
 * Selene sets {@code selene.*} in its own {@code application.conf}. An invalid value is a
 * {@link SettingsException} whose message is one line naming the setting and the allowed values.
 */
public final class CacheSettings {

    /** The root of every Selene setting. */
    public static final String ROOT = "selene";

    private static final String STANDALONE_RESOURCE = "/selene-standalone.conf";
    private static final List<String> DEVICES = List.of("auto", "simulated", "cuda");
    private static final List<String> LAYOUT_KEYS = List.of("ranks", "page-bytes", "row-bytes", "pages-per-record",
            "tokens-per-page");
    private static final String LAYOUTS = String.join(", ", Layout.PRESETS)
            + ", or an object {" + String.join(", ", LAYOUT_KEYS) + "}";

    private CacheSettings() {
    }

    /** The cache's settings from the application's configuration: {@code fromConfig(ConfigFactory.load())}. */
    public static CacheConfig load() {
        return fromConfig(ConfigFactory.load());
    }

    /**
     * Validates the cache's settings under {@code selene} of {@code resolvedRoot}, a resolved configuration with
     * the reference defaults in it (such as {@link ConfigFactory#load()} returns). Settings of other components
     * under {@code selene} are left alone.
     */
    public static CacheConfig fromConfig(Config resolvedRoot) {
        SettingsReader r = new SettingsReader(resolvedRoot, ROOT);
        Layout layout = layout(resolvedRoot);
        long warm = r.size("warm");
        String warmAllowed = ByteSize.warmProblem(warm, layout.slotBytes(), "selene.layout");
        if (warmAllowed != null) {
            throw SettingsException.invalid(r.path("warm"), r.raw("warm"), warmAllowed);
        }
        int concurrency = r.integer("concurrency", 1, 65_536);
        long budget = r.size("host-budget");
        if (budget == 0) {
            throw SettingsException.invalid(r.path("host-budget"), r.raw("host-budget"), "more than 0 bytes, e.g. 16g");
        }
        int window = r.integer("transfer-window-slots", 0, 1 << 20);
        String device = r.oneOf("device", DEVICES);
        String diskDir = r.string("disk.dir");
        long diskBytes = r.size("disk.size");
        long recordBytes = layout.slotsPerRecord(true) * layout.slotBytes();
        if (diskDir.isEmpty()) {
            diskDir = null;
        } else if (diskBytes < recordBytes) {
            throw SettingsException.invalid(r.path("disk.size"), r.raw("disk.size"), "at least one record ("
                    + ByteSize.format(recordBytes) + ") when selene.disk.dir is set, e.g. 100g");
        }
        List<String> pool = r.addresses("pool.managers");
        Duration maxAge = r.durationOrOff("prefix-cache.max-age");
        boolean drain = r.bool("prefix-cache.drain-on-shutdown");
        String policy = r.oneOf("policy", Policies.NAMES);
        int windowSlots = window > 0 ? window : layout.slotsPerRecord(true);
        long smallestIntake = 2L * windowSlots * layout.slotBytes();
        if (smallestIntake > budget) {
            // Not the warm tier's fault: the budget holds not even the smallest intake (two transfer windows).
            String why = "' is invalid: two transfer windows of " + windowSlots + " slots ("
                    + ByteSize.format(smallestIntake) + ") do not fit the host budget of " + ByteSize.format(budget)
                    + "; allowed: ";
            if (window > 0) {
                throw new SettingsException(r.path("transfer-window-slots") + " = '" + window + why + "at most "
                        + budget / layout.slotBytes() / 2 + " slots, or 0 for one record's slots");
            }
            throw new SettingsException(r.path("host-budget") + " = '" + r.raw("host-budget") + why + "at least "
                    + ByteSize.format(smallestIntake) + " (the warm tier comes on top), e.g. 16g");
        }
        String unfit = IntakeSizing.budgetProblem(layout, windowSlots, warm, budget, r.path("host-budget"));
        if (unfit != null) {
            throw new SettingsException(r.path("warm") + " = '" + r.raw("warm") + "' is invalid: " + unfit);
        }
        try {
            return new CacheConfig(layout, warm, concurrency, window, budget, device, diskDir, diskBytes, pool,
                    maxAge, drain, policy);
        } catch (IllegalArgumentException e) {
            throw new SettingsException(ROOT + ": " + e.getMessage());
        }
    }

    /**
     * The configuration of an actor system that Selene makes itself: this library's {@code selene-standalone.conf}
     * (SLF4J logging, a small default dispatcher, no dead-letter logging, stop on the JVM's shutdown hook) under
     * the application's own {@code application.conf} and system properties, over every {@code reference.conf}.
     * A caller that starts the cache with a Pekko configuration of its own uses that instead.
     */
    public static Config standaloneSystemConfig() {
        Config standalone = ConfigFactory.parseResources(CacheSettings.class, STANDALONE_RESOURCE,
                ConfigParseOptions.defaults().setAllowMissing(false));
        return ConfigFactory.load(ConfigFactory.defaultApplication().withFallback(standalone));
    }

    private static Layout layout(Config c) {
        String p = ROOT + ".layout";
        if (!c.hasPath(p)) {
            throw SettingsException.invalid(p, "", LAYOUTS);
        }
        ConfigValue v = c.getValue(p);
        if (v.valueType() == ConfigValueType.STRING) {
            String name = c.getString(p);
            if (!Layout.PRESETS.contains(name.toLowerCase(Locale.ROOT))) {
                throw SettingsException.invalid(p, name, LAYOUTS);
            }
            return Layout.preset(name);
        }
        if (v.valueType() != ConfigValueType.OBJECT) {
            throw SettingsException.invalid(p, v.unwrapped(), LAYOUTS);
        }
        for (String key : ((ConfigObject) v).keySet()) {
            if (!LAYOUT_KEYS.contains(key)) {
                throw new SettingsException(p + "." + key + " is not a setting; allowed: "
                        + String.join(", ", LAYOUT_KEYS));
            }
        }
        for (String key : LAYOUT_KEYS) {
            if (!c.hasPath(p + "." + key)) {
                throw new SettingsException(p + "." + key + " is not set; a layout of its own sets each of "
                        + String.join(", ", LAYOUT_KEYS));
            }
        }
        SettingsReader r = new SettingsReader(c, p);
        int ranks = r.integer("ranks", 1, 64);
        int pageBytes = (int) r.size("page-bytes");
        int rowBytes = (int) Math.min(Integer.MAX_VALUE, r.size("row-bytes"));
        int pagesPerRecord = r.integer("pages-per-record", 1, 4096);
        int tokensPerPage = r.integer("tokens-per-page", 1, 65_536);
        try {
            return new Layout("custom", ranks, pageBytes, rowBytes, pagesPerRecord, tokensPerPage);
        } catch (IllegalArgumentException e) {
            throw new SettingsException(ROOT + "." + e.getMessage());
        }
    }
}
