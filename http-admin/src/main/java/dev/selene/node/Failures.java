package dev.selene.node;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** What a failure that crossed a future or an executor was underneath, for the one line a user or a log gets. */
public final class Failures {

    private Failures() {
    }

    /** {@code t} without the {@link CompletionException}s and {@link ExecutionException}s wrapped around it. */
    public static Throwable root(Throwable t) {
        Throwable root = t;
        while ((root instanceof CompletionException || root instanceof ExecutionException) && root.getCause() != null) {
            root = root.getCause();
        }
        return root;
    }

    /** The root's message, or its class's simple name when it has none. */
    public static String message(Throwable t) {
        Throwable root = root(t);
        return root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
    }
}
