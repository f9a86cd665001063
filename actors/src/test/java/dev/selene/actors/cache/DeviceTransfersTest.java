package dev.selene.actors.cache;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The copies in flight that the catalog waits for before it frees the slots of a record actor that failed: what is
 * running when it asks, not what starts later, and a failed copy ends the wait as a finished one does.
 */
class DeviceTransfersTest {

    @Test
    void inFlight_endsWhenEveryCopyRunningAtTheCallHasEnded_failedOnesIncluded_notLaterOnes() {
        DeviceTransfers transfers = new DeviceTransfers();
        CompletableFuture<Void> first = transfers.track(new CompletableFuture<>());
        CompletableFuture<Void> second = transfers.track(new CompletableFuture<>());
        CompletableFuture<Void> waited = transfers.inFlight();
        CompletableFuture<Void> later = transfers.track(new CompletableFuture<>());

        first.complete(null);
        assertFalse(waited.isDone(), "one copy running at the call is still running");
        second.completeExceptionally(new IllegalStateException("injected copy failure"));
        assertTrue(waited.isDone(), "both have ended; the one started after the call is not waited for");
        assertFalse(waited.isCompletedExceptionally(), "a failed copy ends the wait like a finished one");
        assertFalse(later.isDone());
    }

    @Test
    void inFlight_withNoCopyRunning_isDoneAtOnce() {
        DeviceTransfers transfers = new DeviceTransfers();
        transfers.track(CompletableFuture.<Void>completedFuture(null));
        assertTrue(transfers.inFlight().isDone());
    }
}
