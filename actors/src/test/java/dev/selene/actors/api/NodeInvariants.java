package dev.selene.actors.api;

import java.util.concurrent.CompletionStage;

/**
 * Tests' access to a node's self-check of its bookkeeping (slot totals, pins, no file of a record without its
 * parent's, no record in two states), which is not part of the API: in the module's test artifact, for the tests of
 * this module and of the modules built on it.
 */
public final class NodeInvariants {

    private NodeInvariants() {
    }

    /** The first invariant of {@code cache}'s node that is broken, or an empty string. */
    public static CompletionStage<String> violation(SeleneCache cache) {
        return cache.invariantViolation();
    }
}
