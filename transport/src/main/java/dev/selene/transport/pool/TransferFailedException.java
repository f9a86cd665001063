package dev.selene.transport.pool;

/** A data-plane transfer that did not end with every byte delivered; the message says why. */
public final class TransferFailedException extends RuntimeException {

    private final boolean notHeld;

    /** A failure saying {@code reason}. */
    public TransferFailedException(String reason) {
        this(reason, false);
    }

    /** A failure saying {@code reason}; {@code notHeld} when the peer's store answered that it holds no such record. */
    public TransferFailedException(String reason, boolean notHeld) {
        super(reason, null, false, false);
        this.notHeld = notHeld;
    }

    /** Whether the peer's store answered that it holds no such record (nothing went wrong on the way). */
    public boolean notHeld() {
        return notHeld;
    }
}
