package dev.selene.transport.pool;

import java.util.concurrent.CompletableFuture;

/**
 * One transfer on a data plane, started by {@link DataPlane#push} or {@link DataPlane#fetch}: a handle that can be
 * waited on or aborted.
 *
 * @param <T> what a transfer that ended well yields
 */
public interface Transfer<T> {

    /**
     * Completes once the transfer has ended: with its value when every byte arrived (and, for a fetch, verified),
     * exceptionally with a {@link TransferFailedException} otherwise. Either way, once it has completed the
     * transfer no longer reads or writes the memory it was given.
     */
    CompletableFuture<T> done();

    /** Ends the transfer early (its connection is closed); {@link #done()} then fails with {@code reason}. */
    void abort(String reason);
}
