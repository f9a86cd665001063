package dev.selene.node.burst;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The burst's process CPU clock is as fine as its per-thread clock: over a few milliseconds of one thread's work the
 * process reads at least that thread's CPU time (the management bean's 10 ms ticks could read less, even nothing,
 * and made "CPU per publication beside the copy" 0 on a short burst).
 */
class ProcessCpuTest {

    @Test
    void overAFewMillisecondsOfOneThreadsWork_theProcessReadsAtLeastThatThreadsCpuTime() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        for (int attempt = 0; attempt < 20; attempt++) {
            long process0 = ProcessCpu.nanos();
            long thread0 = threads.getCurrentThreadCpuTime();
            long sink = 0;
            while (threads.getCurrentThreadCpuTime() - thread0 < 2_000_000) { // 2 ms of this thread's CPU
                sink += Long.numberOfTrailingZeros(sink + attempt + 1);
            }
            long thread = threads.getCurrentThreadCpuTime() - thread0;
            long process = ProcessCpu.nanos() - process0;
            assertTrue(process >= thread, "process " + process + " ns < this thread's " + thread + " ns (" + sink
                    + ")");
        }
    }
}
