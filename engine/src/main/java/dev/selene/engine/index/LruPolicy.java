package dev.selene.engine.index;

/**
 * Least recently used: the droppable record used longest ago goes first. A record that becomes droppable lands at
 * the end its last use belongs to (hot if it was used after the hottest, else cold), so every step is O(1) at the
 * price of an approximate order for those records. The default policy.
 */
public final class LruPolicy implements EvictionPolicy {

    /** The name settings use. */
    public static final String NAME = "lru";

    private final RecencyList list = new RecencyList();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void onUse(RecordIndex.Entry e, Use use) {
        if (list.contains(e)) {
            list.moveHot(e);
        }
    }

    @Override
    public void enlist(RecordIndex.Entry e) {
        list.addByUse(e);
    }

    @Override
    public void delist(RecordIndex.Entry e) {
        list.unlink(e);
    }

    @Override
    public RecordIndex.Entry victim() {
        return list.head;
    }

    @Override
    public int size() {
        return list.size;
    }
}
