package dev.selene.engine.key;

import dev.selene.engine.layout.Layout;

import java.util.Objects;

/**
 * What a publication describes: the record's key, its parent's key (null for a root) and whether it carries a
 * row. A record without a row is page-only: it supplies pages to its descendants but never ends a match.
 */
public record RecordSpec(RecordKey key, RecordKey parent, boolean hasRow) {

    public RecordSpec {
        if (key == null) {
            throw new IllegalArgumentException("key is required");
        }
        if (parent != null && !parent.namespace().equals(key.namespace())) {
            throw new IllegalArgumentException("parent " + parent + " is in another namespace than " + key);
        }
    }

    /** The same record with a row ({@code true}) or as a page-only record ({@code false}). */
    public RecordSpec withRow(boolean row) {
        return row == hasRow ? this : new RecordSpec(key, parent, row);
    }

    public boolean isRoot() {
        return parent == null;
    }

    /**
     * Whether the record comes next in a chain after {@code previous} (null: at a chain's start), as a match needs:
     * a key skipped or out of order must end the match, never serve a record at another record's position.
     */
    public boolean follows(RecordKey previous) {
        return Objects.equals(parent, previous);
    }

    /** Slots the record needs under {@code layout}. */
    public int slots(Layout layout) {
        return layout.slotsPerRecord(hasRow);
    }
}
