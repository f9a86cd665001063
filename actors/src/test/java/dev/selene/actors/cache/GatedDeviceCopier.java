package dev.selene.actors.cache;

import dev.selene.transport.gpu.CopyPlan;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.ForwardingDeviceCopier;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test double for fault injection: a real simulated device whose device-to-host copies can be held back (a
 * stalled copy) or made to fail (a copy error), so tests can pin down in-flight and failure behaviour.
 */
final class GatedDeviceCopier extends ForwardingDeviceCopier {

    private volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);
    private final AtomicInteger failNext = new AtomicInteger();
    private final AtomicInteger crashNext = new AtomicInteger();

    /** Thrown out of {@code copyToHost} itself: a bug in the copier that makes the calling actor crash. */
    static final class InjectedCrash extends Error {
        InjectedCrash() {
            super("injected crash in copyToHost", null, false, false); // one log line, no stack trace
        }
    }

    /** A failed device-to-host copy: one log line, no stack trace (the test, not the copier, failed it). */
    static final class InjectedCopyFailure extends IllegalStateException {
        InjectedCopyFailure() {
            super("injected copy failure");
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    /** Makes the next {@code n} device-to-host copy calls throw {@link InjectedCrash}. */
    void crashNextCopies(int n) {
        crashNext.set(n);
    }

    GatedDeviceCopier(DeviceCopier real) {
        super(real);
    }

    /** Holds every later device-to-host copy until {@link #open()}. */
    void close_gate() {
        gate = new CompletableFuture<>();
    }

    /** Lets held copies run. */
    void open() {
        gate.complete(null);
    }

    /** Makes the next {@code n} device-to-host copies fail. */
    void failNextCopies(int n) {
        failNext.set(n);
    }

    @Override
    public String name() {
        return "gated " + super.name();
    }

    @Override
    public CompletableFuture<Void> copyToHost(CopyPlan plan) {
        if (crashNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new InjectedCrash();
        }
        if (failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return CompletableFuture.failedFuture(new InjectedCopyFailure());
        }
        return gate.thenCompose(v -> super.copyToHost(plan));
    }
}
