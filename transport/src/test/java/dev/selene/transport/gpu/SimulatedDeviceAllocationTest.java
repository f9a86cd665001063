package dev.selene.transport.gpu;

import com.sun.management.ThreadMXBean;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.host.HostMemory;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the simulated device's copy loop allocates once compiled. It runs in the slow tier, in a JVM of its own
 * kind: in the fast tier's shared JVM the other copiers' tests (the emulated CUDA driver's) run the same library code
 * with other memory and change what the compiler makes of this loop (it then keeps a few boxed values per piece),
 * which says nothing about a node, whose JVM runs one copier.
 */
class SimulatedDeviceAllocationTest {

    /**
     * The copy engine allocates nothing per piece: a plan of 8,192 pieces makes its thread allocate less than a byte
     * per piece (a slice, an array slot or an iterator per piece would be 16 or more), measured after a warm-up plan
     * (the least of a few copies, once the compiler has finished the loop).
     */
    @Test
    void aCopy_allocatesNothingPerPiece_onTheCopyEngineThread() throws Exception {
        Layout layout = Layout.small();
        int pieces = 8192;
        try (SimulatedDevice device = SimulatedDevice.create()) {
            HostMemory host = HostMemory.allocate(layout, pieces);
            device.register(host);
            long base = device.allocateDevice((long) pieces * layout.pageBytes());
            long[] dev = new long[pieces];
            long[] hst = new long[pieces];
            int[] lengths = new int[pieces];
            for (int i = 0; i < pieces; i++) {
                dev[i] = base + (long) i * layout.pageBytes();
                hst[i] = host.address(i, 0);
                lengths[i] = 512;
            }
            CopyPlan plan = new CopyPlan(dev, hst, lengths);
            ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
            for (int round = 0; round < 20; round++) { // compiled before it is measured
                device.copyToHost(plan).get(30, TimeUnit.SECONDS);
                device.copyToDevice(plan).get(30, TimeUnit.SECONDS);
            }
            // The least of the copies measured for up to 30 s: on a loaded machine the compiler may finish the loop
            // (and its escape analysis) long after the warm-up; a copy that allocates per piece never gets under the
            // bound, however long it runs.
            long allocated = Long.MAX_VALUE;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (allocated >= pieces && System.nanoTime() - deadline < 0) {
                long before = allocatedByCopyEngines(mx);
                device.copyToHost(plan).get(30, TimeUnit.SECONDS);
                allocated = Math.min(allocated, allocatedByCopyEngines(mx) - before);
            }
            assertTrue(allocated < pieces, "the copy engine allocated " + allocated + " bytes for " + pieces
                    + " pieces");
            device.freeDevice(base);
            host.close();
        }
    }

    /** Bytes allocated so far by the device-to-host copy-engine threads of this JVM (an idle one adds nothing). */
    private static long allocatedByCopyEngines(ThreadMXBean mx) {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("sim-copy-d2h-")) {
                sum += Math.max(0, mx.getThreadAllocatedBytes(t.threadId()));
            }
        }
        return sum;
    }

}
