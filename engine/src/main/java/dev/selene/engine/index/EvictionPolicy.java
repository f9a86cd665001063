package dev.selene.engine.index;

/**
 * The order in which droppable records leave memory. The {@link RecordIndex} decides which records are droppable
 * (clean ones, or memory-only leaves and the rows of memory-only records others hang from); its policy decides which of them goes next, and hears every use so that it
 * can rank by more than recency.
 *
 * <p>One instance serves one index and is confined with it to the actor that owns it; no locks inside.
 */
public interface EvictionPolicy {

    /** How a record was used. */
    enum Use {
        /** A restore's match ended at the record: a request resumed from its row. */
        RESUMED,
        /** A publication found the record present. */
        REPUBLISHED
    }

    /** The policy's name as settings spell it. */
    String name();

    /**
     * Whether the policy ranks a row apart from its record's pages, so that a memory-only index may drop the row of
     * a record others hang from and keep its pages. A policy that orders by recency alone must not: a row that
     * requests resume from only now and then (a shared prompt's end) looks cold there although its record is in
     * constant use as a prefix, and dropping it loses every later resume at it.
     */
    default boolean dropsRowsApart() {
        return false;
    }

    /** {@code e} became resident; it is not droppable yet. */
    default void onInsert(RecordIndex.Entry e) {
    }

    /** {@code e} was used; when it is droppable it is still enlisted. */
    default void onUse(RecordIndex.Entry e, Use use) {
    }

    /** {@code e} is a resident ancestor of a record just used. */
    default void onAncestorUse(RecordIndex.Entry e) {
    }

    /**
     * {@code e}, delisted, lost its row (dropped apart from its pages) or gained one (published at a record held
     * without one); {@code e.spec().hasRow()} says which.
     */
    default void onRowChanged(RecordIndex.Entry e) {
    }

    /** {@code e} left the index; it was delisted first. */
    default void onRemove(RecordIndex.Entry e) {
    }

    /** {@code e} became droppable. */
    void enlist(RecordIndex.Entry e);

    /** {@code e}, enlisted, is no longer droppable (pinned, a parent again, or leaving). */
    void delist(RecordIndex.Entry e);

    /** The droppable record to drop next (it stays enlisted), or null when none is. */
    RecordIndex.Entry victim();

    /** Records enlisted, for the index's invariant check. */
    int size();

    /**
     * Rows this policy has decided to hold back from dropping for the next turn of their conversation, each counted
     * once per publication of its row (whether or not it then waited among the droppable records); 0 for a policy
     * that holds nothing back.
     */
    default long rowsHeldBack() {
        return 0;
    }
}
