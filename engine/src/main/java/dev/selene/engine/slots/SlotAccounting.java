package dev.selene.engine.slots;

/**
 * The accounting of one pool of equal host slots: which are free, how many are held by clean records (droppable
 * at once), and how many form the intake that allocation tries to keep free for GPU publications.
 *
 * <p>Confined to the one actor that owns it (the catalog, through its slot ledger); no locks inside.
 *
 * <h2>Design</h2>
 * <pre>
 * Slots are numbered 0..total-1 and handed out from a LIFO free stack, so a record's slots are allocated and
 * released in one call each, and recently freed (cache-warm) slots are reused first. A bit per slot catches a
 * double release at once instead of corrupting the free stack.
 *
 * Two kinds of allocation exist (see Purpose). A publication may use every slot: the intake exists to receive
 * publications. Staging (disk reads, pool transfers) must leave half the intake free, so a restore can never
 * starve the GPU's publications, while a pool made only of intake (disk-only) can still stage restores. [1] keeping the intake free: an allocation that would eat into the intake first asks for the coldest clean
 * records to be evicted, which is why clean slots are counted as records change state rather than found by a
 * scan. [2] oversize: whether a record can ever fit, and how short an allocation is, come from the static pair
 * fits/shortBy, which the facade (Oversize), the pool (Short) and the tests all call.
 * </pre>
 */
public final class SlotAccounting {

    /** Why slots are wanted: decides how much of the intake the allocation may use. */
    public enum Purpose {
        /** A GPU publication: may use the intake, which exists for it. */
        PUBLISH,
        /**
         * Staging for a restore or transfer: must leave half the intake free, so a restore can never starve
         * publications, yet a node whose pool is all intake (disk-only, pool-only) can still restore.
         */
        STAGING
    }

    private final int total;
    private final int intake;
    private final int[] freeStack;
    private final boolean[] inUse;
    private int free;
    private int clean;

    /** A pool of {@code total} slots of which {@code intake} are kept free for publications when possible. */
    public SlotAccounting(int total, int intake) {
        if (total < 1) {
            throw new IllegalArgumentException("total slots must be at least 1, was " + total);
        }
        if (intake < 0 || intake > total) {
            throw new IllegalArgumentException("intake slots must be in 0.." + total + ", was " + intake);
        }
        this.total = total;
        this.intake = intake;
        this.freeStack = new int[total];
        this.inUse = new boolean[total];
        for (int i = 0; i < total; i++) {
            freeStack[i] = total - 1 - i;
        }
        this.free = total;
    }

    /** The most slots an allocation for {@code purpose} could ever be granted in a pool of this shape. */
    public static int maxGrant(int total, int intake, Purpose purpose) {
        return total - reserve(intake, purpose);
    }

    /** Slots an allocation for {@code purpose} must leave free. */
    static int reserve(int intake, Purpose purpose) {
        return purpose == Purpose.PUBLISH ? 0 : intake / 2;
    }

    /** Whether a record of {@code slots} can ever be granted: false means {@code Oversize}, never {@code Retry}. */
    public static boolean fits(int slots, int total, int intake, Purpose purpose) {
        return slots >= 0 && slots <= maxGrant(total, intake, purpose);
    }

    /** How many slots an allocation of {@code slots} is short with {@code free} slots free now (0: it can go). */
    public static int shortBy(int slots, int free, int intake, Purpose purpose) {
        return Math.max(0, slots + reserve(intake, purpose) - free);
    }

    public boolean fits(int slots, Purpose purpose) {
        return fits(slots, total, intake, purpose);
    }

    public int shortBy(int slots, Purpose purpose) {
        return shortBy(slots, free, intake, purpose);
    }

    /**
     * Slots of clean records to evict before allocating {@code slots}, so that the allocation leaves the intake
     * free if at all possible (keeping the intake free): 0 when it already does or nothing clean is left.
     */
    public int evictionWanted(int slots) {
        return Math.clamp((long) slots + intake - free, 0, clean);
    }

    /**
     * Slots by which free plus clean falls short of two intakes: the pressure that spilling must relieve.
     */
    public int pressureDeficit() {
        return Math.max(0, 2 * intake - (free + clean));
    }

    /** Takes {@code slots} free slots; the caller has checked {@link #shortBy} is 0. */
    public SlotList allocate(int slots) {
        if (slots > free) {
            throw new IllegalStateException("allocate " + slots + " with only " + free + " free");
        }
        int[] taken = new int[slots];
        for (int i = 0; i < slots; i++) {
            int s = freeStack[--free];
            inUse[s] = true;
            taken[i] = s;
        }
        return SlotList.wrap(taken);
    }

    /** Returns every slot of {@code slots} to the free stack; a slot that is not in use is an error. */
    public void release(SlotList slots) {
        for (int i = 0; i < slots.count(); i++) {
            int s = slots.slot(i);
            if (s < 0 || s >= total || !inUse[s]) {
                for (int j = 0; j < i; j++) {
                    inUse[slots.slot(j)] = true;
                }
                throw new IllegalStateException("release of slot " + s + " that is not in use"
                        + (s >= 0 && s < total ? " (or named twice)" : ""));
            }
            inUse[s] = false;
        }
        for (int i = 0; i < slots.count(); i++) {
            freeStack[free++] = slots.slot(i);
        }
    }

    /** Counts {@code slots} more slots as held by clean (droppable) records. */
    public void addClean(int slots) {
        if (slots < 0 || clean + slots > total - free) {
            throw new IllegalStateException("clean " + clean + " + " + slots + " exceeds slots in use " + (total - free));
        }
        clean += slots;
    }

    /** Counts {@code slots} fewer slots as clean. */
    public void removeClean(int slots) {
        if (slots < 0 || slots > clean) {
            throw new IllegalStateException("clean " + clean + " - " + slots + " is negative");
        }
        clean -= slots;
    }

    public int total() {
        return total;
    }

    public int intake() {
        return intake;
    }

    public int free() {
        return free;
    }

    public int clean() {
        return clean;
    }

    public int inUse() {
        return total - free;
    }

    /** Whether slot {@code slot} is allocated (false for a free slot or one out of range). */
    public boolean isInUse(int slot) {
        return slot >= 0 && slot < total && inUse[slot];
    }

    /** Checks the counts against the slot bits; an {@link IllegalStateException} names the first imbalance. */
    public void checkInvariants() {
        int used = 0;
        for (boolean b : inUse) {
            if (b) {
                used++;
            }
        }
        if (used != total - free) {
            throw new IllegalStateException("slot bits say " + used + " in use, counters say " + (total - free));
        }
        for (int i = 0; i < free; i++) {
            if (inUse[freeStack[i]]) {
                throw new IllegalStateException("slot " + freeStack[i] + " is both free and in use");
            }
        }
        if (clean < 0 || clean > used) {
            throw new IllegalStateException("clean " + clean + " outside 0.." + used);
        }
    }
}
