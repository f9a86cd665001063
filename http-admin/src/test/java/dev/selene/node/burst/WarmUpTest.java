package dev.selene.node.burst;

import org.junit.jupiter.api.Test;

import dev.selene.engine.layout.Layout;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The warm-up's size, and the wait for the compilers to go quiet before a measured window (a stand-in clock). */
class WarmUpTest {

    private static final Duration STEP = Duration.ofMillis(20);

    @Test
    void settle_waitsWhileTheStandInCompilersWork_andReturnsAtTheFirstQuietStep() throws Exception {
        AtomicInteger reads = new AtomicInteger();
        // Busy (a whole core) for the first four reads' steps, then still.
        double waited = WarmUp.settle(() -> Math.min(reads.getAndIncrement(), 4) * STEP.toNanos(), STEP,
                Duration.ofSeconds(10));
        assertEquals(6, reads.get(), "one read before, four busy steps, one quiet step");
        assertTrue(waited >= 5 * STEP.toNanos() / 1e9, "waited " + waited + " s");
        assertTrue(waited < 5, "stopped at the quiet step, long before the limit: " + waited + " s");
    }

    @Test
    void settle_stopsAtItsLimit_whenTheStandInCompilersNeverGoQuiet() throws Exception {
        AtomicInteger reads = new AtomicInteger();
        double waited = WarmUp.settle(() -> reads.getAndIncrement() * STEP.toNanos(), STEP, Duration.ofMillis(200));
        assertTrue(waited >= 0.2 && waited < 2, "waited " + waited + " s against a limit of 0.2 s");
        assertTrue(reads.get() >= 5, "kept watching until the limit: " + reads.get() + " reads");
    }

    @Test
    void settle_returnsAfterOneStep_whenTheCompilersAreAlreadyQuiet() throws Exception {
        AtomicInteger reads = new AtomicInteger();
        WarmUp.settle(() -> {
            reads.incrementAndGet();
            return 7;
        }, STEP, Duration.ofSeconds(10));
        assertEquals(2, reads.get(), "one read before and one after the first step");
    }

    @Test
    void warmUpOnThePool_isAsLargeAsTheMeasuredRun_elsewhereSmall() {
        assertEquals(128, WarmUp.conversationsOnTiers(settings(128, 2)), "with two managers");
        assertEquals(WarmUp.WARMUP_CONVERSATIONS, WarmUp.conversationsOnTiers(settings(128, 0)), "without a pool");
        assertEquals(8, WarmUp.conversationsOnTiers(settings(8, 0)), "never more than the measured run");
    }

    private static BurstSettings settings(int conversations, int managers) {
        return new BurstSettings(Layout.deepseekTp4(), conversations, 32, 3072, 3, 1 << 30, 2000, "simulated", 2, 0,
                1, false, false, null, managers);
    }
}
