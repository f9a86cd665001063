package dev.selene.actors.metrics;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** An immutable set of tag names and values, in the order they were added. */
final class Tags {

    private final Map<String, String> tags;

    private Tags(Map<String, String> tags) {
        this.tags = tags;
    }

    static Tags of(String name, String value) {
        return new Tags(Map.of(name, value));
    }

    /** These tags with {@code name} set to {@code value}. */
    Tags withTag(String name, String value) {
        Map<String, String> m = new LinkedHashMap<>(tags);
        m.put(name, value);
        return new Tags(Collections.unmodifiableMap(m));
    }

    Map<String, String> asMap() {
        return tags;
    }
}
