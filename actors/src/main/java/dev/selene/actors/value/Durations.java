package dev.selene.actors.value;

import java.time.Duration;

/** Durations as people write them: {@code 250 ms}, {@code 30 s}, {@code 12 min}, {@code 7 h}, {@code 2 d}. */
public final class Durations {

    private Durations() {
    }

    /** {@code d} in its largest whole unit, e.g. {@code 12 h} rather than {@code PT12H}. */
    public static String human(Duration d) {
        if (d.isZero()) {
            return "0 s";
        }
        if (d.toDays() > 0 && d.equals(Duration.ofDays(d.toDays()))) {
            return d.toDays() + " d";
        }
        if (d.toHours() > 0 && d.equals(Duration.ofHours(d.toHours()))) {
            return d.toHours() + " h";
        }
        if (d.toMinutes() > 0 && d.equals(Duration.ofMinutes(d.toMinutes()))) {
            return d.toMinutes() + " min";
        }
        if (d.toSeconds() > 0 && d.equals(Duration.ofSeconds(d.toSeconds()))) {
            return d.toSeconds() + " s";
        }
        return d.toMillis() + " ms";
    }
}
