package dev.selene.engine.trace;

import java.util.List;
import java.util.Locale;

/**
 * Where a serving engine checkpoints a request when it publishes the request's records: which blocks it publishes
 * and which of them carry a row (the state needed to resume there).
 *
 * <p>An engine checkpoints at block boundaries it has completed, so the default, {@code last-full}, publishes the
 * prompt's full blocks with a row at the last of them. In a Mooncake trace a prompt's last block is almost always
 * partial and the next turn hashes that position differently once the block is full, so {@code last} (all blocks,
 * a row at the very last) can almost never be resumed from. {@code every} puts a row on every block, and a
 * positive {@code interval} adds a row at every {@code interval}-th block under any placement.
 *
 * @param placement where the rows go
 * @param interval  also a row at blocks interval, 2×interval, … (0: none)
 */
public record RowRule(Placement placement, int interval) {

    /** Where the rows of a request go. */
    public enum Placement {
        /** Full blocks are published; a row at the last full block. */
        LAST_FULL("last-full"),
        /** Every block is published, a partial last one included; a row at the last. */
        LAST("last"),
        /** Every block is published, each with a row. */
        EVERY("every");

        private final String label;

        Placement(String label) {
            this.label = label;
        }

        /** The name options and reports use. */
        public String label() {
            return label;
        }
    }

    /** The names {@link #parse} accepts. */
    public static final List<String> NAMES = List.of("last-full", "last", "every");

    /** The default: a row at each request's last full block. */
    public static final RowRule LAST_FULL = new RowRule(Placement.LAST_FULL, 0);

    public RowRule {
        if (placement == null) {
            throw new IllegalArgumentException("a row placement is required; allowed: " + String.join(", ", NAMES));
        }
        if (interval < 0) {
            throw new IllegalArgumentException("row interval " + interval + " is invalid; allowed: 0 (none) or a "
                    + "positive number of blocks");
        }
    }

    /** The rule named {@code rows} (last-full, last, every) with rows also every {@code interval} blocks. */
    public static RowRule parse(String rows, int interval) {
        for (Placement p : Placement.values()) {
            if (p.label.equals(rows.toLowerCase(Locale.ROOT))) {
                return new RowRule(p, interval);
            }
        }
        throw new IllegalArgumentException("--rows '" + rows + "' is unknown; allowed: " + String.join(", ", NAMES));
    }

    /** Blocks of {@code r} the engine publishes, root first: a prefix of its chain. */
    public int published(TraceRequest r) {
        return placement == Placement.LAST_FULL ? r.fullBlocks() : r.hashIds().length;
    }

    /** Whether block {@code i} of {@code r}, one of its {@link #published} blocks, carries a row. */
    public boolean hasRow(TraceRequest r, int i) {
        int n = published(r);
        boolean placed = switch (placement) {
            case LAST_FULL, LAST -> i == n - 1;
            case EVERY -> true;
        };
        return placed || interval > 0 && (i + 1) % interval == 0;
    }

    /** The rule as options spell it, e.g. {@code last-full} or {@code last-full, every 4}. */
    public String label() {
        return interval == 0 ? placement.label : placement.label + ", every " + interval;
    }

    /** The rule as a sentence for reports. */
    public String describe() {
        String where = switch (placement) {
            case LAST_FULL -> "at each request's last full block";
            case LAST -> "at each request's last block (partial ones included)";
            case EVERY -> "at every block";
        };
        return interval == 0 || placement == Placement.EVERY ? where : where + " and every " + interval + " blocks";
    }
}
