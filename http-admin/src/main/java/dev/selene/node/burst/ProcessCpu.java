package dev.selene.node.burst;

import com.sun.management.OperatingSystemMXBean;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;

/**
 * The CPU time of this whole process (every thread, the JIT's and the collector's included), to the nanosecond:
 * {@code clock_gettime(CLOCK_PROCESS_CPUTIME_ID)}, the clock the per-thread CPU times are read from too. The
 * management bean's figure counts in clock ticks (10 ms on Linux), coarser than a short burst: the process could
 * then read less CPU than one of its own threads. Where the call is not available, the bean's figure.
 */
final class ProcessCpu {

    private static final int CLOCK_PROCESS_CPUTIME_ID = 2;
    private static final MethodHandle CLOCK_GETTIME = clockGettime();

    private ProcessCpu() {
    }

    static long nanos() {
        if (CLOCK_GETTIME != null) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment ts = arena.allocate(16, 8);
                int rc = (int) CLOCK_GETTIME.invokeExact(CLOCK_PROCESS_CPUTIME_ID, ts);
                if (rc == 0) {
                    return ts.get(ValueLayout.JAVA_LONG, 0) * 1_000_000_000L + ts.get(ValueLayout.JAVA_LONG, 8);
                }
            } catch (Throwable e) {
                // fall through to the bean's figure
            }
        }
        return ManagementFactory.getPlatformMXBean(OperatingSystemMXBean.class).getProcessCpuTime();
    }

    private static MethodHandle clockGettime() {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return null;
        }
        try {
            Linker linker = Linker.nativeLinker();
            return linker.defaultLookup().find("clock_gettime")
                    .map(f -> linker.downcallHandle(f, FunctionDescriptor.of(ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_INT, ValueLayout.ADDRESS)))
                    .orElse(null);
        } catch (RuntimeException | LinkageError e) {
            return null; // no native access granted: the bean's figure
        }
    }
}
