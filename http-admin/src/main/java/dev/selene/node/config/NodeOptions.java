package dev.selene.node.config;

import dev.selene.actors.api.SettingsException;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The command-line options shared by every command that starts a node: {@code --config FILE} and the flags that
 * override single settings of it. A flag left out keeps the file's or the default value.
 */
public final class NodeOptions {

    @Option(names = "--config", paramLabel = "FILE", description = "HOCON settings file (see config/ and docs/settings.md).")
    Path config;

    @Option(names = "--layout", paramLabel = "PRESET", description = "Layout preset: deepseek-tp4, qwen-tp1, small (selene.layout).")
    String layout;

    @Option(names = "--warm", paramLabel = "SIZE", description = "Warm tier size, e.g. 8g; 0 = intake only (selene.warm).")
    String warm;

    @Option(names = "--concurrency", paramLabel = "N", description = "Active requests at once; sizes the intake (selene.concurrency).")
    String concurrency;

    @Option(names = "--host-budget", paramLabel = "SIZE", description = "Most host memory for slots (selene.host-budget).")
    String hostBudget;

    @Option(names = "--device", paramLabel = "KIND", description = "auto, simulated or cuda (selene.device).")
    String device;

    @Option(names = "--disk-dir", paramLabel = "DIR", description = "Disk tier directory (selene.disk.dir).")
    String diskDir;

    @Option(names = "--create-disk-dir",
            description = "Create the disk tier directory when it is missing; without it a missing one is refused "
                    + "(selene.disk.create).")
    Boolean createDiskDir;

    @Option(names = "--disk-size", paramLabel = "SIZE", description = "Disk tier size (selene.disk.size).")
    String diskSize;

    @Option(names = "--pool-managers", paramLabel = "HOST:PORT,...",
            description = "Comma-separated pool managers to retire records to (selene.pool.managers).")
    String poolManagers;

    @Option(names = "--prefix-cache-max-age", paramLabel = "DURATION",
            description = "Drop records unused for longer, e.g. 2h; off = never (selene.prefix-cache.max-age).")
    String maxAge;

    @Option(names = "--prefix-cache-drain-on-shutdown",
            description = "Spill every parked record before exiting (selene.prefix-cache.drain-on-shutdown).")
    Boolean drainOnShutdown;

    @Option(names = "--admin-bind", paramLabel = "ADDRESS", description = "Admin HTTP address (selene.admin.bind).")
    String adminBind;

    @Option(names = "--admin-port", paramLabel = "PORT", description = "Admin HTTP port; 0 = any free port (selene.admin.port).")
    String adminPort;

    @Option(names = "--admin-token", paramLabel = "TOKEN",
            description = "Bearer token of the mutating endpoints (selene.admin.token; SELENE_ADMIN_TOKEN also sets it).")
    String adminToken;

    /** The settings these options select. */
    public NodeSettings load() {
        NodeSettings s = withFlag(() -> SettingsLoader.load(config, overrides()));
        SettingsLoader.checkFileIsFor(config, false);
        return s;
    }

    /** The settings these options select, with {@code commandDefaults} in place of the library's defaults. */
    public NodeSettings load(Map<String, ?> commandDefaults) {
        NodeSettings s = withFlag(() -> SettingsLoader.load(config, overrides(), commandDefaults));
        SettingsLoader.checkFileIsFor(config, false);
        return s;
    }

    /** The flag of each setting that has one, for the settings' error lines. */
    private static final Map<String, String> FLAGS = Map.ofEntries(
            Map.entry("layout", "--layout"), Map.entry("warm", "--warm"), Map.entry("concurrency", "--concurrency"),
            Map.entry("host-budget", "--host-budget"), Map.entry("device", "--device"),
            Map.entry("disk.dir", "--disk-dir"), Map.entry("disk.create", "--create-disk-dir"),
            Map.entry("disk.size", "--disk-size"), Map.entry("pool.managers", "--pool-managers"),
            Map.entry("prefix-cache.max-age", "--prefix-cache-max-age"),
            Map.entry("prefix-cache.drain-on-shutdown", "--prefix-cache-drain-on-shutdown"),
            Map.entry("admin.bind", "--admin-bind"), Map.entry("admin.port", "--admin-port"),
            Map.entry("admin.token", "--admin-token"));

    /**
     * {@code load}, with an invalid setting's line naming its flag too ({@code selene.disk.size = '0' is invalid;
     * ... (--disk-size)}), so that someone who gave flags alone sees which flag to add or change.
     */
    private static NodeSettings withFlag(Supplier<NodeSettings> load) {
        try {
            return load.get();
        } catch (SettingsException e) {
            String message = e.getMessage();
            for (Map.Entry<String, String> f : FLAGS.entrySet()) {
                if (message != null && message.startsWith(SettingsLoader.ROOT + "." + f.getKey() + " = ")) {
                    throw new SettingsException(message + " (" + f.getValue() + ")");
                }
            }
            throw e;
        }
    }

    /** Setting path → value for every flag given ({@code --pool-managers} as a list). */
    public Map<String, Object> overrides() {
        Map<String, Object> m = new LinkedHashMap<>();
        put(m, "layout", layout);
        put(m, "warm", warm);
        put(m, "concurrency", concurrency);
        put(m, "host-budget", hostBudget);
        put(m, "device", device);
        put(m, "disk.dir", diskDir);
        put(m, "disk.create", createDiskDir == null ? null : createDiskDir.toString());
        put(m, "disk.size", diskSize);
        if (poolManagers != null) {
            m.put(SettingsLoader.ROOT + ".pool.managers", Arrays.stream(poolManagers.split(",")).map(String::strip)
                    .filter(a -> !a.isEmpty()).toList());
        }
        put(m, "prefix-cache.max-age", maxAge);
        put(m, "prefix-cache.drain-on-shutdown", drainOnShutdown == null ? null : drainOnShutdown.toString());
        put(m, "admin.bind", adminBind);
        put(m, "admin.port", adminPort);
        put(m, "admin.token", adminToken);
        return m;
    }

    private static void put(Map<String, Object> m, String setting, String value) {
        if (value != null) {
            m.put(SettingsLoader.ROOT + "." + setting, value);
        }
    }
}
