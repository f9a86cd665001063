package dev.selene.actors.api;

/** An invalid setting: its message is one line naming the setting and the allowed values. */
public final class SettingsException extends IllegalArgumentException {

    public SettingsException(String message) {
        super(message);
    }

    /** {@code setting = 'value' is invalid; allowed: allowed}. */
    public static SettingsException invalid(String setting, Object value, String allowed) {
        return new SettingsException(setting + " = '" + value + "' is invalid; allowed: " + allowed);
    }
}
