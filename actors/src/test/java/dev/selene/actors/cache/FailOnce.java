package dev.selene.actors.cache;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test double for fault injection: once armed, throws the first time {@code actor} is shown a message whose class
 * has the simple name {@code message}, as a bug in that actor would.
 */
final class FailOnce implements FaultInjection {

    private final String actor;
    private final String message;
    private final AtomicBoolean armed = new AtomicBoolean();
    private final AtomicInteger fired = new AtomicInteger();

    FailOnce(String actor, String message) {
        this.actor = actor;
        this.message = message;
    }

    /** Makes the next matching message fail. */
    void arm() {
        armed.set(true);
    }

    /** How many times it threw. */
    int fired() {
        return fired.get();
    }

    @Override
    public void beforeHandling(String actor, Object msg) {
        if (this.actor.equals(actor) && msg.getClass().getSimpleName().equals(message)
                && armed.compareAndSet(true, false)) {
            fired.incrementAndGet();
            throw new InjectedFault("fault injected in " + actor + " on " + message);
        }
    }

    /** The failure it injects: a one-line log entry, no stack trace (the test, not the code, threw it). */
    static final class InjectedFault extends RuntimeException {
        InjectedFault(String message) {
            super(message, null, false, false);
        }
    }
}
