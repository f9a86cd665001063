package dev.selene.transport.pool;

import java.util.Objects;

/**
 * Where a node's data plane listens: a host name or address and a port, written {@code host:port}.
 *
 * @param host the name or address peers connect to
 * @param port the TCP port
 */
public record DataAddress(String host, int port) {

    public DataAddress {
        Objects.requireNonNull(host, "host");
        if (host.isBlank()) {
            throw new IllegalArgumentException("a data address needs a host");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("data port " + port + " is invalid; allowed: 1..65535");
        }
    }

    /** Parses {@code host:port}. */
    public static DataAddress parse(String text) {
        Objects.requireNonNull(text, "text");
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("data address '" + text + "' is invalid; expected host:port");
        }
        try {
            return new DataAddress(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("data address '" + text + "' is invalid; expected host:port");
        }
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
