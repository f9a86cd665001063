package dev.selene.transport.pool;

import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.fail;

/** A bounded wait for something another thread does. */
final class TestWait {
    private TestWait() {
    }

    static void until(BooleanSupplier done, Supplier<String> what) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > end) {
                fail("not within 10 s: " + what.get());
            }
            Thread.sleep(20);
        }
    }
}
