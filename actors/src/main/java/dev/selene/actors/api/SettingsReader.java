package dev.selene.actors.api;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import dev.selene.engine.config.ByteSize;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * Typed reads of the settings under one path of a resolved configuration. Every failure, a missing value
 * included, is a {@link SettingsException} naming the full path of the setting and the values it allows.
 */
public final class SettingsReader {

    private static final String SIZE = "a size such as 0, 4096, 512m, 8g or 1.5GiB";
    private static final String DURATION = "a duration such as 500ms, 2s or 10m";
    private static final String DURATION_OR_OFF = "a duration such as 30m, 2h or 7d, or off";
    private static final Duration SHORTEST = Duration.ofMillis(1);
    private static final Duration LONGEST = Duration.ofDays(3650);
    private static final List<String> OFF = List.of("off", "false", "none", "");

    private final Config root;
    private final String prefix;

    /** Reads {@code prefix.<setting>} from {@code root}, e.g. prefix {@code selene} and setting {@code warm}. */
    public SettingsReader(Config root, String prefix) {
        this.root = root;
        this.prefix = prefix;
    }

    /** The full path of {@code setting}: {@code prefix.setting}. */
    public String path(String setting) {
        return prefix + "." + setting;
    }

    /** The value as written, for messages; empty when unset or null. */
    public String raw(String setting) {
        String p = path(setting);
        if (!root.hasPathOrNull(p) || root.getIsNull(p)) {
            return "";
        }
        return String.valueOf(root.getValue(p).unwrapped());
    }

    /** An integer in {@code min..max}. */
    public int integer(String setting, int min, int max) {
        String allowed = "an integer in " + min + ".." + max;
        ConfigValue v = require(setting, allowed);
        long n;
        try {
            n = Long.parseLong(String.valueOf(v.unwrapped()).trim());
        } catch (NumberFormatException e) {
            throw SettingsException.invalid(path(setting), v.unwrapped(), allowed);
        }
        if (n < min || n > max) {
            throw SettingsException.invalid(path(setting), n, allowed);
        }
        return (int) n;
    }

    /** A size in bytes: {@code 0}, {@code 4096}, {@code 512m}, {@code 8g}, {@code 1.5GiB}. */
    public long size(String setting) {
        require(setting, SIZE);
        String text = raw(setting);
        try {
            return ByteSize.parse(path(setting), text);
        } catch (IllegalArgumentException e) {
            throw SettingsException.invalid(path(setting), text, SIZE);
        }
    }

    /** A string (a number or boolean counts as its text), trimmed. */
    public String string(String setting) {
        ConfigValue v = require(setting, "a string");
        if (v.valueType() == ConfigValueType.OBJECT || v.valueType() == ConfigValueType.LIST) {
            throw SettingsException.invalid(path(setting), v.unwrapped(), "a string");
        }
        return String.valueOf(v.unwrapped()).trim();
    }

    /** One of {@code allowed} (lower case), in any case. */
    public String oneOf(String setting, List<String> allowed) {
        String v = string(setting).toLowerCase(Locale.ROOT);
        if (!allowed.contains(v)) {
            throw SettingsException.invalid(path(setting), v, String.join(", ", allowed));
        }
        return v;
    }

    /** {@code true} or {@code false} (HOCON also takes yes/no and on/off). */
    public boolean bool(String setting) {
        require(setting, "true or false");
        try {
            return root.getBoolean(path(setting));
        } catch (ConfigException e) {
            throw SettingsException.invalid(path(setting), raw(setting), "true or false");
        }
    }

    /** A positive duration. */
    public Duration duration(String setting) {
        require(setting, DURATION);
        refuseBareNumber(setting, DURATION);
        Duration d;
        try {
            d = root.getDuration(path(setting));
        } catch (ConfigException e) {
            throw SettingsException.invalid(path(setting), raw(setting), DURATION);
        }
        if (d.isNegative() || d.isZero()) {
            throw SettingsException.invalid(path(setting), raw(setting), "a positive duration");
        }
        return d;
    }

    /** A positive duration, or null for {@code off} (also {@code none}, {@code false} or empty). */
    public Duration durationOrOff(String setting) {
        require(setting, DURATION_OR_OFF);
        if (OFF.contains(raw(setting).trim().toLowerCase(Locale.ROOT))) {
            return null;
        }
        refuseBareNumber(setting, DURATION_OR_OFF);
        Duration d;
        try {
            d = root.getDuration(path(setting));
        } catch (ConfigException e) {
            throw SettingsException.invalid(path(setting), raw(setting), DURATION_OR_OFF);
        }
        if (d.isNegative() || d.isZero()) {
            throw SettingsException.invalid(path(setting), raw(setting), DURATION_OR_OFF);
        }
        if (d.compareTo(SHORTEST) < 0 || d.compareTo(LONGEST) > 0) {
            // below a millisecond it would show as 0 ms; far beyond years it is clamped: neither is what was meant
            throw SettingsException.invalid(path(setting), raw(setting), "a duration from 1ms to 3650d, or off");
        }
        return d;
    }

    /**
     * Refuses a number without a unit: the configuration library would read it as milliseconds, so a max age of
     * {@code 24} meant as hours would drop every record a few milliseconds after its last use.
     */
    private void refuseBareNumber(String setting, String allowed) {
        if (raw(setting).trim().matches("[-+]?[0-9.]+([eE][-+]?[0-9]+)?")) {
            throw SettingsException.invalid(path(setting), raw(setting), allowed + " (with its unit: a number alone "
                    + "would be milliseconds)");
        }
    }

    /** A list of strings. */
    public List<String> strings(String setting) {
        require(setting, "a list of strings");
        try {
            return List.copyOf(root.getStringList(path(setting)));
        } catch (ConfigException e) {
            throw SettingsException.invalid(path(setting), raw(setting), "a list of strings, e.g. [\"a\", \"b\"]");
        }
    }

    /** A list of {@code host:port} addresses. */
    public List<String> addresses(String setting) {
        List<String> out = strings(setting);
        for (String a : out) {
            if (!a.matches("[^:/\\s]+:\\d{1,5}") || !hasPortInRange(a)) {
                throw SettingsException.invalid(path(setting), a, "a list of host:port addresses, ports 1..65535");
            }
        }
        return out;
    }

    /**
     * Whether {@code hostPort}, already matched as ending in {@code :} and up to five digits, names a port a peer can
     * listen on, 1..65535.
     */
    public static boolean hasPortInRange(String hostPort) {
        int port = Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
        return port >= 1 && port <= 65_535;
    }

    private ConfigValue require(String setting, String allowed) {
        String p = path(setting);
        if (!root.hasPathOrNull(p) || root.getIsNull(p)) {
            throw SettingsException.invalid(p, "", allowed);
        }
        return root.getValue(p);
    }
}
