package dev.selene.node;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
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

    /** An I/O failure in a few words, on one line, without the path a message around it already names. */
    public static String io(IOException e) {
        String why = switch (e) {
            case AccessDeniedException a -> "permission denied";
            case NoSuchFileException n -> "no such file or directory";
            case FileSystemException f when f.getReason() != null -> f.getReason();
            default -> e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        };
        return why.replaceAll("\\s*\\R\\s*", " ");
    }
}
