package dev.selene.engine.index;

/** An intrusive doubly linked recency list of index entries: head is the coldest entry, tail the hottest. */
final class RecencyList {

    RecordIndex.Entry head;
    RecordIndex.Entry tail;
    long slots;
    int size;

    /** Adds {@code e} at the hot end when it was used after the hottest entry, else at the cold end. */
    void addByUse(RecordIndex.Entry e) {
        if (tail == null || e.useTick > tail.useTick) {
            addHot(e);
        } else {
            addCold(e);
        }
    }

    void addHot(RecordIndex.Entry e) {
        e.prev = tail;
        e.next = null;
        if (tail == null) {
            head = e;
        } else {
            tail.next = e;
        }
        tail = e;
        e.inList = this;
        slots += e.slots().count();
        size++;
    }

    void addCold(RecordIndex.Entry e) {
        e.next = head;
        e.prev = null;
        if (head == null) {
            tail = e;
        } else {
            head.prev = e;
        }
        head = e;
        e.inList = this;
        slots += e.slots().count();
        size++;
    }

    /** Moves {@code e}, a member, to the hot end. */
    void moveHot(RecordIndex.Entry e) {
        unlink(e);
        addHot(e);
    }

    boolean contains(RecordIndex.Entry e) {
        return e.inList == this;
    }

    void unlink(RecordIndex.Entry e) {
        if (e.prev == null) {
            head = e.next;
        } else {
            e.prev.next = e.next;
        }
        if (e.next == null) {
            tail = e.prev;
        } else {
            e.next.prev = e.prev;
        }
        e.prev = null;
        e.next = null;
        e.inList = null;
        slots -= e.slots().count();
        size--;
    }
}
