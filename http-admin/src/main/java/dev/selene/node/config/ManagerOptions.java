package dev.selene.node.config;

import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The command-line options of {@code selene manager}: {@code --config FILE} and the flags that override single
 * settings of it. A flag left out keeps the file's or the default value.
 */
public final class ManagerOptions {

    @Option(names = "--config", paramLabel = "FILE", description = "HOCON settings file (see config/manager.conf and docs/settings.md).")
    Path config;

    @Option(names = "--bind", paramLabel = "ADDRESS", description = "Cluster address other pool members reach this manager at (selene.manager.bind).")
    String bind;

    @Option(names = "--port", paramLabel = "PORT", description = "Cluster port; 0 = any free port (selene.manager.port).")
    String port;

    @Option(names = "--seeds", paramLabel = "HOST:PORT,...",
            description = "Comma-separated seed managers; empty = a cluster of its own (selene.manager.seeds).")
    String seeds;

    @Option(names = "--store-size", paramLabel = "SIZE", description = "Bytes of records this manager keeps, e.g. 64g (selene.manager.store-size).")
    String storeSize;

    @Option(names = "--max-age", paramLabel = "DURATION",
            description = "Drop records unused for longer, e.g. 24h; off = never (selene.manager.max-age).")
    String maxAge;

    @Option(names = "--replicas", paramLabel = "N", description = "Managers that must hold a record, 1..3 (selene.manager.replicas).")
    String replicas;

    @Option(names = "--layout", paramLabel = "PRESET", description = "The hosts' layout preset: deepseek-tp4, qwen-tp1, small (selene.layout).")
    String layout;

    @Option(names = "--admin-port", paramLabel = "PORT", description = "Admin HTTP port; 0 = any free port (selene.manager.admin-port).")
    String adminPort;

    @Option(names = "--admin-bind", paramLabel = "ADDRESS", description = "Admin HTTP address (selene.admin.bind).")
    String adminBind;

    /** The settings these options select. */
    public NodeSettings load() {
        NodeSettings s = SettingsLoader.load(config, overrides());
        SettingsLoader.checkFileIsFor(config, true);
        return s;
    }

    /** Setting path → value for every flag given ({@code --seeds} as a list). */
    public Map<String, Object> overrides() {
        Map<String, Object> m = new LinkedHashMap<>();
        put(m, "manager.bind", bind);
        put(m, "manager.port", port);
        if (seeds != null) {
            m.put(SettingsLoader.ROOT + ".manager.seeds", Arrays.stream(seeds.split(",")).map(String::strip)
                    .filter(s -> !s.isEmpty()).toList());
        }
        put(m, "manager.store-size", storeSize);
        put(m, "manager.max-age", maxAge);
        put(m, "manager.replicas", replicas);
        put(m, "layout", layout);
        put(m, "manager.admin-port", adminPort);
        put(m, "admin.bind", adminBind);
        return m;
    }

    private static void put(Map<String, Object> m, String setting, String value) {
        if (value != null) {
            m.put(SettingsLoader.ROOT + "." + setting, value);
        }
    }
}
