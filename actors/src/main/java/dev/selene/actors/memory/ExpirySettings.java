package dev.selene.actors.memory;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Max age of the memory tier (B18) and the clock that last uses are read from.
 *
 * @param maxAge     records unused for longer are removed; null means off (no sweep timer at all)
 * @param clockNanos the tier's monotonic clock; tests pass one they advance with Pekko's manual time
 */
public record ExpirySettings(Duration maxAge, LongSupplier clockNanos) {

    /** Max age off. */
    public static final ExpirySettings OFF = new ExpirySettings(null, System::nanoTime);

    public ExpirySettings {
        if (maxAge != null && (maxAge.isNegative() || maxAge.isZero())) {
            throw new IllegalArgumentException("max-age " + maxAge + " is invalid; allowed: a positive duration or off");
        }
        if (clockNanos == null) {
            throw new IllegalArgumentException("clock is required");
        }
    }

    /** {@code maxAge} (null: off) on the system's monotonic clock. */
    public static ExpirySettings of(Duration maxAge) {
        return new ExpirySettings(maxAge, System::nanoTime);
    }

    public boolean enabled() {
        return maxAge != null;
    }
}
