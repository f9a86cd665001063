package dev.selene.transport.pool;

/** A data-plane transfer that did not end with every byte delivered; the message says why. */
public final class TransferFailedException extends RuntimeException {

    /** A failure saying {@code reason}. */
    public TransferFailedException(String reason) {
        super(reason, null, false, false);
    }
}
