package dev.selene.node.burst;

import dev.selene.node.workload.PublishPhase;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The CPU figures of a burst: the process's and the copy threads' during the publications, and with a pool, both
 * ends' CPU (this node's threads and the manager processes) over each measured window.
 */
final class CpuAccounting {

    /** Name prefix of the node's threads: its actor system's and its data plane's. */
    static final String NODE_THREAD_PREFIX = "selene-";

    /** Name prefix of the simulated device's device-to-host copy threads (the publication's copy). */
    static final String COPY_THREAD_PREFIX = "sim-copy-d2h-";

    /** Name prefix of the data planes' threads (the node's and the raw pool baseline's). */
    static final String DATA_THREAD_PREFIX = "selene-data";

    private final LongSupplier peerCpuNanos;
    private final LongSupplier peerDataCpuNanos;
    private final Supplier<List<Long>> peerPids;
    private final ThreadCpuBreakdown breakdown;

    /** Accounting with no process at the other end (a warm-up's: it prints no breakdown). */
    CpuAccounting() {
        this(() -> 0, () -> 0, List::of, false);
    }

    /**
     * Accounting that counts the CPU time of the processes at the other end of the pool (the managers, whole and
     * their data planes', and their pids for the breakdown) into the pool's figures.
     */
    CpuAccounting(LongSupplier peerCpuNanos, LongSupplier peerDataCpuNanos, Supplier<List<Long>> peerPids) {
        this(peerCpuNanos, peerDataCpuNanos, peerPids, ThreadCpuBreakdown.ON);
    }

    private CpuAccounting(LongSupplier peerCpuNanos, LongSupplier peerDataCpuNanos, Supplier<List<Long>> peerPids,
                          boolean breakdown) {
        this.peerCpuNanos = peerCpuNanos;
        this.peerDataCpuNanos = peerDataCpuNanos;
        this.peerPids = peerPids;
        this.breakdown = new ThreadCpuBreakdown(peerPids, breakdown);
    }

    /**
     * CPU time so far of the JIT compiler threads of this process and of the processes at the other end (from
     * /proc; 0 where it is absent).
     */
    long compilerNanos() {
        long sum = PoolManagers.compilerNanos(ProcessHandle.current().pid());
        for (long pid : peerPids.get()) {
            sum += PoolManagers.compilerNanos(pid);
        }
        return sum;
    }

    /** CPU time so far of the live threads whose name starts with {@code prefix}, summed. */
    static long threadCpuNanos(String prefix) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds(), 0)) {
            if (t != null && t.getThreadName().startsWith(prefix)) {
                sum += Math.max(0, mx.getThreadCpuTime(t.getThreadId()));
            }
        }
        return sum;
    }

    /**
     * Watches the publications for {@code report}: the process's CPU while they ran (and its share of the
     * machine's cores) and the simulated device's copy threads' share of it.
     */
    PublishPhase.Watch publications(BurstReport report) {
        return new PublishPhase.Watch() {
            private long cpuStart;
            private long copyCpuStart;

            @Override
            public void started() {
                cpuStart = ProcessCpu.nanos();
                copyCpuStart = threadCpuNanos(COPY_THREAD_PREFIX);
            }

            @Override
            public void ended(long elapsedNanos) {
                report.burstCpuCores = (ProcessCpu.nanos() - cpuStart) / (double) elapsedNanos;
                report.copyThreadCpuNanos = threadCpuNanos(COPY_THREAD_PREFIX) - copyCpuStart;
                report.burstCpuNanos = ProcessCpu.nanos() - cpuStart;
            }
        };
    }

    /**
     * CPU of both ends of the pool: on this side the node's own threads (its actors, its cluster transport, its
     * data plane: every thread named {@value #NODE_THREAD_PREFIX}), not the burst's threads that stand in for the
     * serving engine (publishing, probing, verifying) nor the simulated device's; on the other side the manager
     * processes whole.
     */
    private long bothEndsCpuNanos() {
        return threadCpuNanos(NODE_THREAD_PREFIX) + peerCpuNanos.getAsLong();
    }

    /**
     * CPU of the data planes' threads at both ends (the working threads of the pool's transfers, as the copy threads
     * are of the copies): this JVM's threads named {@value #DATA_THREAD_PREFIX} (the node's data plane and the raw
     * baseline's), and the managers'.
     */
    private long dataPlanesCpuNanos() {
        return threadCpuNanos(DATA_THREAD_PREFIX) + peerDataCpuNanos.getAsLong();
    }

    /** Opens a measured window of the pool's CPU. */
    PoolWindow poolWindow() {
        return new PoolWindow();
    }

    /** One measured window of the pool's CPU, from its start: both ends' whole CPU and the data planes' share. */
    final class PoolWindow {
        private final long all = bothEndsCpuNanos();
        private final long data = dataPlanesCpuNanos();

        private PoolWindow() {
            breakdown.begin();
        }

        /**
         * Adds the window's CPU to the pool's figures ({@code raw}: to the raw baseline's) and, when asked for, prints
         * its breakdown per GB of {@code recordBytes}.
         */
        void end(BurstReport report, boolean raw, String name, long recordBytes) {
            long allUsed = bothEndsCpuNanos() - all;
            long dataUsed = dataPlanesCpuNanos() - data;
            if (raw) {
                report.rawPoolCpuNanos += allUsed;
                report.rawPoolDataCpuNanos += dataUsed;
            } else {
                report.poolCpuNanos += allUsed;
                report.poolDataCpuNanos += dataUsed;
            }
            breakdown.end(name, recordBytes / 1e9);
        }
    }
}
