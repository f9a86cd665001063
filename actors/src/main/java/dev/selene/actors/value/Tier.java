package dev.selene.actors.value;

/** Where a record lives. */
public enum Tier {
    MEMORY("memory"),
    DISK("disk"),
    POOL("pool");

    private final String label;

    Tier(String label) {
        this.label = label;
    }

    /** The bounded metric label. */
    public String label() {
        return label;
    }
}
