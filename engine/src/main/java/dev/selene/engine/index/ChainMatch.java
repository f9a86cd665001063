package dev.selene.engine.index;

import java.util.function.IntPredicate;

/**
 * The match rule (lookup): the deepest record of a chain whose whole chain is present, in any tier, and which has
 * a row. Page-only records supply pages to their descendants but never end a match.
 */
public final class ChainMatch {

    private ChainMatch() {
    }

    /**
     * The number of chain records the match covers (0: no match).
     *
     * @param length  records in the chain, root first
     * @param present whether record i is present in some tier
     * @param hasRow  whether record i (present) has a row
     */
    public static int depth(int length, IntPredicate present, IntPredicate hasRow) {
        int match = 0;
        for (int i = 0; i < length && present.test(i); i++) {
            if (hasRow.test(i)) {
                match = i + 1;
            }
        }
        return match;
    }
}
