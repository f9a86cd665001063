package dev.selene.engine.config;

import java.util.Locale;

/** Parses and prints byte sizes such as {@code 8g}, {@code 512MiB}, {@code 4096} or {@code 1.5G}. */
public final class ByteSize {

    private ByteSize() {
    }

    /**
     * The number of bytes {@code text} denotes (binary units: k = 1024); an {@link IllegalArgumentException}
     * naming {@code setting} and the accepted forms otherwise.
     */
    public static long parse(String setting, String text) {
        String s = text == null ? "" : text.trim().toLowerCase(Locale.ROOT).replace("_", "");
        if (s.endsWith("ib")) {
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("b") && s.length() > 1 && !Character.isDigit(s.charAt(s.length() - 2))) {
            s = s.substring(0, s.length() - 1);
        } else if (s.endsWith("b")) {
            s = s.substring(0, s.length() - 1);
        }
        long unit = 1;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'k' -> unit = 1L << 10;
                case 'm' -> unit = 1L << 20;
                case 'g' -> unit = 1L << 30;
                case 't' -> unit = 1L << 40;
                default -> unit = 1;
            }
            if (unit != 1) {
                s = s.substring(0, s.length() - 1);
            }
        }
        try {
            double v = Double.parseDouble(s);
            if (v < 0 || Double.isNaN(v) || v * unit > Long.MAX_VALUE / 2 || v > 0 && v * unit < 1) {
                throw new NumberFormatException(); // a size above 0 but under one byte would be 0: not what was meant
            }
            return (long) (v * unit);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(setting + " = '" + text
                    + "' is invalid; allowed: a size such as 0, 4096, 512m, 8g or 1.5GiB");
        }
    }

    /**
     * A warm tier's size {@code text} for option or setting {@code setting}: 0 (none), or at least one slot of
     * {@code slotBytes}; an {@link IllegalArgumentException} naming {@code setting} otherwise.
     */
    public static long parseWarm(String setting, String text, long slotBytes) {
        long bytes = parse(setting, text);
        String allowed = warmProblem(bytes, slotBytes, "the layout");
        if (allowed != null) {
            throw new IllegalArgumentException(setting + " = '" + text + "' is invalid; allowed: " + allowed);
        }
        return bytes;
    }

    /**
     * What a warm tier's size may be, when {@code bytes} may not (null when it may): 0 (no warm tier) or at least one
     * slot of {@code slotBytes} of {@code layoutName}, since a size under one slot would be no slot at all.
     */
    public static String warmProblem(long bytes, long slotBytes, String layoutName) {
        return bytes > 0 && bytes < slotBytes
                ? "0 (no warm tier) or at least one slot of " + layoutName + " (" + format(slotBytes) + ")" : null;
    }

    /** {@code bytes} in the largest binary unit that keeps one decimal, e.g. {@code 8.0 GiB}. */
    public static String format(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
