package dev.selene.node;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Deleting a directory a command made for itself ({@code soak}'s, {@code replay}'s node directory): at its normal end,
 * and from the shutdown hook of a command stopped from outside (Ctrl-C, SIGTERM), which races both the command's own
 * end and its node still writing.
 */
public final class OwnDirectory {

    /** Tries of a stopping process to delete the directory while files still appear in it. */
    private static final int STOPPING_TRIES = 100;
    private static final long STOPPING_PAUSE_MILLIS = 50;
    /** How long a stopping process waits for the node writing into the directory to stop first. */
    private static final long WRITER_STOP_SECONDS = 30;

    private OwnDirectory() {
    }

    /** Deletes {@code dir} and everything in it; one deleted meanwhile (by the other side of the race) is no failure. */
    public static void delete(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (NoSuchFileException | UncheckedIOException e) {
            if (Files.exists(dir)) {
                throw e instanceof UncheckedIOException u ? u.getCause() : (IOException) e;
            }
        }
    }

    /**
     * Deletes {@code dir} from a shutdown hook, as far as it can. The node writing into it stops in a hook of its own
     * (its actor system's), run at the same time: this one first waits for that stop ({@code writerStopped} gives it,
     * or null when no node runs; up to 30 seconds), since a node still running can make files or directories again
     * after they are deleted. Then it deletes, trying again while files appear (up to about five seconds); the node's
     * complaints about files gone under it are not shown.
     */
    public static void deleteWhileStopping(Path dir, Supplier<CompletionStage<?>> writerStopped) {
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext logging) {
            logging.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(Level.OFF);
            logging.getLogger("org.apache.pekko").setLevel(Level.OFF);
        }
        CompletionStage<?> stopped = writerStopped.get();
        if (stopped != null) {
            try {
                stopped.toCompletableFuture().get(WRITER_STOP_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                // not stopped in time, or stopped with a failure: delete what can be deleted all the same
            }
        }
        for (int attempt = 0; attempt < STOPPING_TRIES && Files.exists(dir); attempt++) {
            try {
                delete(dir);
            } catch (IOException | RuntimeException e) {
                try {
                    Thread.sleep(STOPPING_PAUSE_MILLIS);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }
}
