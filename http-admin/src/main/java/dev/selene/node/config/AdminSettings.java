package dev.selene.node.config;

import java.time.Duration;

/**
 * The admin HTTP server's settings.
 *
 * @param bind           address to bind (127.0.0.1 by default)
 * @param port           TCP port; 0 picks a free one
 * @param token          bearer token of the mutating endpoints; empty refuses them
 * @param maxBodyBytes   largest request body accepted
 * @param sampleInterval status-page sampling interval
 * @param history        how long status-page samples are kept
 */
public record AdminSettings(String bind, int port, String token, long maxBodyBytes, Duration sampleInterval,
                            Duration history) {

    /** Samples the status-page ring keeps. */
    public int historySamples() {
        return (int) Math.max(1, Math.min(100_000, history.toMillis() / Math.max(1, sampleInterval.toMillis())));
    }

    public boolean tokenSet() {
        return token != null && !token.isEmpty();
    }

    public AdminSettings withPort(int p) {
        return new AdminSettings(bind, p, token, maxBodyBytes, sampleInterval, history);
    }

    public AdminSettings withToken(String t) {
        return new AdminSettings(bind, port, t, maxBodyBytes, sampleInterval, history);
    }

    public AdminSettings withSampleInterval(Duration d) {
        return new AdminSettings(bind, port, token, maxBodyBytes, d, history);
    }
}
