package dev.selene.actors.cache;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The device copies in flight (publications copying in, restores copying out): the node waits for them before it
 * unmaps the host slots they read or write. Thread-safe; copies complete on the copier's threads.
 */
final class DeviceTransfers {

    private final Set<CompletableFuture<?>> running = ConcurrentHashMap.newKeySet();

    /** Tracks {@code copy} until it completes; returns it. */
    <T> CompletableFuture<T> track(CompletableFuture<T> copy) {
        running.add(copy);
        copy.whenComplete((v, e) -> running.remove(copy));
        return copy;
    }

    /** Completes (normally, whatever the copies' outcomes) once every copy in flight now has ended. */
    CompletableFuture<Void> inFlight() {
        CompletableFuture<?>[] now = running.stream().map(c -> c.handle((v, e) -> null))
                .toArray(CompletableFuture[]::new);
        return CompletableFuture.allOf(now);
    }

    /** Waits up to {@code seconds} for every copy in flight; false when some were still running. */
    boolean awaitAll(long seconds) {
        try {
            CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)).get(seconds, TimeUnit.SECONDS);
            return true;
        } catch (ExecutionException e) {
            return true; // each failure was reported to its actor; it has ended
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
