package dev.selene.actors.cache;

import org.apache.pekko.Done;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PipedTest {

    @Test
    void aVoidStage_completesWithDone_notNull_andAFailureStaysAFailure() throws Exception {
        CompletableFuture<Void> ok = new CompletableFuture<>();
        CompletableFuture<Void> failed = new CompletableFuture<>();
        var piped = Piped.nonNull(ok).toCompletableFuture();
        var pipedFailure = Piped.nonNull(failed).toCompletableFuture();
        ok.complete(null);
        failed.completeExceptionally(new IllegalStateException("copy failed"));
        assertSame(Done.getInstance(), piped.get(1, TimeUnit.SECONDS));
        ExecutionException e = assertThrows(ExecutionException.class, () -> pipedFailure.get(1, TimeUnit.SECONDS));
        assertSame(IllegalStateException.class, e.getCause().getClass());
    }
}
