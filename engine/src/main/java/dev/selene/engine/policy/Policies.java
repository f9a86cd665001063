package dev.selene.engine.policy;

import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.LruPolicy;

import java.util.List;
import java.util.Locale;

/** The eviction policies a node can run, by the name {@code selene.policy} gives them. */
public final class Policies {

    /** The names {@link #create} accepts. */
    public static final List<String> NAMES = List.of(LruPolicy.NAME, ReusePolicy.NAME, WorthPolicy.NAME);

    /** The default policy's name: worth (it never lost more than a point to LRU on the comparison's traces). */
    public static final String DEFAULT = WorthPolicy.NAME;

    private Policies() {
    }

    /** A new instance of the policy named {@code name}; an {@link IllegalArgumentException} names the allowed ones. */
    public static EvictionPolicy create(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case LruPolicy.NAME -> new LruPolicy();
            case ReusePolicy.NAME -> new ReusePolicy();
            case WorthPolicy.NAME -> new WorthPolicy();
            default -> throw new IllegalArgumentException("policy '" + name + "' is unknown; allowed: "
                    + String.join(", ", NAMES));
        };
    }
}
