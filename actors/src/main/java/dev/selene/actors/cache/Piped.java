package dev.selene.actors.cache;

import org.apache.pekko.Done;

import java.util.concurrent.CompletionStage;

/** Futures handed to an actor's {@code pipeToSelf}. */
public final class Piped {

    private Piped() {
    }

    /**
     * {@code stage} with its result (null for a {@code Void} stage) replaced by {@link Done}: a result that reaches
     * an actor after it stopped becomes a dead letter, and Pekko's dead-letter logging fails on a null one (an error
     * with a stack trace per message in an application's log).
     */
    public static CompletionStage<Done> nonNull(CompletionStage<?> stage) {
        return stage.thenApply(v -> Done.getInstance());
    }
}
