package dev.selene.actors.value;

/**
 * What a drain did: records written to disk, dirty records skipped (they could not be written), and whether it
 * ran out of time.
 */
public record DrainReport(int written, int skipped, boolean timedOut) {
}
