package dev.selene.transport.gpu;

import dev.selene.engine.layout.Layout;
import dev.selene.transport.host.HostMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A stand-in for a GPU where none is present: device memory in its own off-heap allocations, copies run by
 * copy-engine threads, an optional bandwidth cap.
 *
 * <p>Each direction has its own copy engine ({@code sim-copy-d2h-N}, {@code sim-copy-h2d-N} daemon threads, one
 * per direction by default), so publications and restores overlap as they do on a GPU with two copy engines.
 * A plan is validated whole before any byte moves: every device range must lie inside one live allocation
 * (tracked in a {@link TreeMap} by start address) and every host range inside a registered {@link HostMemory}.
 * A copy holds the allocation lock for reading while it moves bytes, so {@link #freeDevice} waits for copies in
 * flight instead of freeing memory under them.
 *
 * <p>With a bandwidth cap, each direction admits at most {@code bandwidthBytesPerSecond} bytes per second over
 * all its threads: after copying a plan the engine thread parks until the plan's share of time has passed.
 */
public final class SimulatedDevice implements DeviceCopier {

    /** Copy-engine threads per direction unless configured otherwise. */
    public static final int DEFAULT_COPY_THREADS_PER_DIRECTION = 1;
    /** How long {@link #close()} waits for copies already running. */
    private static final long CLOSE_WAIT_MILLIS = 5_000;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private final ReentrantReadWriteLock allocationLock = new ReentrantReadWriteLock();
    /** Live device allocations by start address; guarded by {@link #allocationLock}. */
    private final TreeMap<Long, Allocation> allocations = new TreeMap<>();
    /** The registered host mappings, replaced whole when one is added: the copy engine reads it without an iterator. */
    private volatile HostMemory[] hostMappings = new HostMemory[0];
    private final CopyEngine toHost;
    private final CopyEngine toDevice;
    private final long bandwidthBytesPerSecond;
    private volatile boolean closed;

    private SimulatedDevice(int copyThreadsPerDirection, long bandwidthBytesPerSecond) {
        this.bandwidthBytesPerSecond = bandwidthBytesPerSecond;
        this.toHost = new CopyEngine("sim-copy-d2h-", copyThreadsPerDirection, bandwidthBytesPerSecond);
        this.toDevice = new CopyEngine("sim-copy-h2d-", copyThreadsPerDirection, bandwidthBytesPerSecond);
    }

    /** A simulated device with one copy thread per direction and no bandwidth cap. */
    public static SimulatedDevice create() {
        return create(DEFAULT_COPY_THREADS_PER_DIRECTION, 0);
    }

    /**
     * A simulated device with {@code copyThreadsPerDirection} copy threads per direction, each direction capped at
     * {@code bandwidthBytesPerSecond} (0 = uncapped).
     */
    public static SimulatedDevice create(int copyThreadsPerDirection, long bandwidthBytesPerSecond) {
        if (copyThreadsPerDirection < 1 || copyThreadsPerDirection > 64) {
            throw new IllegalArgumentException("copyThreadsPerDirection = " + copyThreadsPerDirection
                    + " is invalid; allowed: 1..64");
        }
        if (bandwidthBytesPerSecond < 0) {
            throw new IllegalArgumentException("bandwidthBytesPerSecond = " + bandwidthBytesPerSecond
                    + " is invalid; allowed: 0 (uncapped) or more");
        }
        return new SimulatedDevice(copyThreadsPerDirection, bandwidthBytesPerSecond);
    }

    @Override
    public String name() {
        return "simulated";
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public String unavailabilityCause() {
        return null;
    }

    /** The per-direction bandwidth cap in bytes per second; 0 when uncapped. */
    public long bandwidthBytesPerSecond() {
        return bandwidthBytesPerSecond;
    }

    /** Bytes copied device → host by plans so far. */
    public long bytesCopiedToHost() {
        return toHost.bytesCopied.sum();
    }

    /** Bytes copied host → device by plans so far. */
    public long bytesCopiedToDevice() {
        return toDevice.bytesCopied.sum();
    }

    /** Nanoseconds the device-to-host copy threads spent moving bytes (summed over threads). */
    public long busyNanosToHost() {
        return toHost.busyNanos.sum();
    }

    /** Nanoseconds the host-to-device copy threads spent moving bytes (summed over threads). */
    public long busyNanosToDevice() {
        return toDevice.busyNanos.sum();
    }

    /** Bytes of device memory currently allocated. */
    public long allocatedBytes() {
        allocationLock.readLock().lock();
        try {
            long total = 0;
            for (Allocation a : allocations.values()) {
                total += a.segment.byteSize();
            }
            return total;
        } finally {
            allocationLock.readLock().unlock();
        }
    }

    @Override
    public synchronized void register(HostMemory host) {
        Objects.requireNonNull(host, "host");
        ensureOpen();
        // A mapping closed since it was registered is forgotten: a new one may reuse its addresses.
        List<HostMemory> open = new ArrayList<>();
        for (HostMemory h : hostMappings) {
            if (h.isOpen() && h != host) {
                open.add(h);
            }
        }
        open.add(host);
        hostMappings = open.toArray(HostMemory[]::new);
    }

    @Override
    public long allocateDevice(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("device allocation of " + bytes + " bytes is invalid; allowed: ≥ 1");
        }
        allocationLock.writeLock().lock();
        try {
            ensureOpen();
            Arena arena = Arena.ofShared();
            MemorySegment segment = arena.allocate(bytes, Layout.ALIGNMENT_BYTES);
            allocations.put(segment.address(), new Allocation(arena, segment));
            return segment.address();
        } finally {
            allocationLock.writeLock().unlock();
        }
    }

    @Override
    public void freeDevice(long address) {
        allocationLock.writeLock().lock();
        try {
            Allocation allocation = allocations.remove(address);
            if (allocation == null) {
                throw new IllegalArgumentException(
                        "device address 0x" + Long.toHexString(address) + " is not the start of a device allocation");
            }
            allocation.arena.close();
        } finally {
            allocationLock.writeLock().unlock();
        }
    }

    @Override
    public void writeDevice(long address, MemorySegment src) {
        allocationLock.readLock().lock();
        try {
            MemorySegment.copy(src, 0, deviceRange("writeDevice:", address, src.byteSize()), 0, src.byteSize());
        } finally {
            allocationLock.readLock().unlock();
        }
    }

    @Override
    public void readDevice(long address, MemorySegment dst) {
        allocationLock.readLock().lock();
        try {
            MemorySegment.copy(deviceRange("readDevice:", address, dst.byteSize()), 0, dst, 0, dst.byteSize());
        } finally {
            allocationLock.readLock().unlock();
        }
    }

    @Override
    public CompletableFuture<Void> copyToHost(CopyPlan plan) {
        return toHost.submit(new CopyTask(plan, true, new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> copyToDevice(CopyPlan plan) {
        return toDevice.submit(new CopyTask(plan, false, new CompletableFuture<>()));
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        toHost.shutdown();
        toDevice.shutdown();
        toHost.awaitTermination();
        toDevice.awaitTermination();
        allocationLock.writeLock().lock();
        try {
            for (Allocation allocation : allocations.values()) {
                allocation.arena.close();
            }
            allocations.clear();
        } finally {
            allocationLock.writeLock().unlock();
        }
        synchronized (this) {
            hostMappings = new HostMemory[0];
        }
    }

    @Override
    public String toString() {
        return "SimulatedDevice[cap " + (bandwidthBytesPerSecond == 0 ? "none" : bandwidthBytesPerSecond + " B/s")
                + "]";
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("simulated device is closed");
        }
    }

    /**
     * Runs one plan on the calling copy-engine thread; returns the bytes it moved. Every piece is checked before any
     * is copied, so that a bad plan copies nothing; neither loop allocates (no slice, array or iterator per piece).
     */
    private long execute(CopyPlan plan, boolean deviceToHost) {
        int pieces = plan.pieces();
        allocationLock.readLock().lock();
        try {
            ensureOpen();
            MemorySegment device = null;
            MemorySegment host = null;
            for (int i = 0; i < pieces; i++) {
                int bytes = plan.lengths()[i];
                long d = plan.device()[i];
                long h = plan.host()[i];
                try {
                    // Looked up only when a piece leaves the last allocation or mapping, as in the copy loops: the
                    // allocation lookup boxes its key, and a box per piece is what this loop must not make.
                    device = bytes >= 0 && holds(device, d, bytes) ? device : deviceSegment("", d, bytes);
                    host = bytes >= 0 && holds(host, h, bytes) ? host : hostSegment("", h, bytes);
                } catch (RuntimeException e) {
                    // The piece number goes into the message only on failure: this loop is the copy engine's hot path.
                    throw e instanceof IllegalStateException
                            ? new IllegalStateException("copy plan piece " + i + ":" + e.getMessage(), e)
                            : new IllegalArgumentException("copy plan piece " + i + ":" + e.getMessage(), e);
                }
            }
            // One loop per direction: a single loop branching on the direction was recompiled by C2 whenever the
            // other direction first ran in a hot loop (an uncommon trap), e.g. inside a timed burst.
            if (deviceToHost) {
                copyPiecesToHost(plan);
            } else {
                copyPiecesToDevice(plan);
            }
            return plan.totalBytes();
        } finally {
            allocationLock.readLock().unlock();
        }
    }

    /** Copies every piece of a checked plan from device to host memory. */
    private void copyPiecesToHost(CopyPlan plan) {
        MemorySegment device = null;
        MemorySegment host = null;
        for (int i = 0; i < plan.pieces(); i++) {
            long d = plan.device()[i];
            long h = plan.host()[i];
            int bytes = plan.lengths()[i];
            // A plan's pieces mostly lie in one allocation and one mapping: look up only when a piece leaves them
            // (the lookup boxes its key, which the compiler does not always take back on a busy machine).
            device = holds(device, d, bytes) ? device : deviceSegment("", d, bytes);
            host = holds(host, h, bytes) ? host : hostSegment("", h, bytes);
            MemorySegment.copy(device, d - device.address(), host, h - host.address(), bytes);
        }
    }

    /** Whether {@code segment} (null: none yet) holds {@code [address, address + bytes)}. */
    private static boolean holds(MemorySegment segment, long address, int bytes) {
        return segment != null && address >= segment.address()
                && address - segment.address() <= segment.byteSize() - bytes;
    }

    /** Copies every piece of a checked plan from host to device memory. */
    private void copyPiecesToDevice(CopyPlan plan) {
        MemorySegment device = null;
        MemorySegment host = null;
        for (int i = 0; i < plan.pieces(); i++) {
            long d = plan.device()[i];
            long h = plan.host()[i];
            int bytes = plan.lengths()[i];
            device = holds(device, d, bytes) ? device : deviceSegment("", d, bytes);
            host = holds(host, h, bytes) ? host : hostSegment("", h, bytes);
            MemorySegment.copy(host, h - host.address(), device, d - device.address(), bytes);
        }
    }

    /** The device bytes {@code [address, address + bytes)}; caller holds the allocation lock. */
    private MemorySegment deviceRange(String what, long address, long bytes) {
        MemorySegment segment = deviceSegment(what, address, bytes);
        return segment.asSlice(address - segment.address(), bytes);
    }

    /**
     * The whole device allocation that holds {@code [address, address + bytes)}; caller holds the allocation lock.
     */
    private MemorySegment deviceSegment(String what, long address, long bytes) {
        Map.Entry<Long, Allocation> entry = allocations.floorEntry(address);
        if (entry != null) {
            MemorySegment segment = entry.getValue().segment;
            long offset = address - entry.getKey();
            if (bytes >= 0 && offset <= segment.byteSize() - bytes) {
                return segment;
            }
        }
        throw new IllegalArgumentException(what + " device range 0x" + Long.toHexString(address) + " + " + bytes
                + " bytes is outside every device allocation");
    }

    /** The whole open host mapping that holds {@code [address, address + bytes)}. */
    private MemorySegment hostSegment(String what, long address, long bytes) {
        HostMemory closedMatch = null;
        HostMemory[] mappings = hostMappings;
        for (int i = 0; i < mappings.length; i++) { // indexed: no iterator on the copy engine's hot path
            HostMemory host = mappings[i];
            if (host.contains(address, bytes)) {
                if (host.isOpen()) {
                    return host.segment();
                }
                closedMatch = host;
            }
        }
        if (closedMatch != null) {
            throw new IllegalStateException(what + " host range 0x" + Long.toHexString(address)
                    + " lies in " + closedMatch + ", which is closed");
        }
        throw new IllegalArgumentException(what + " host range 0x" + Long.toHexString(address) + " + " + bytes
                + " bytes is outside the registered host mapping" + (mappings.length == 0 ? " (none registered)" : ""));
    }

    /** One device allocation: its own shared arena, so that freeing it releases its memory. */
    private record Allocation(Arena arena, MemorySegment segment) {
    }

    /** A plan waiting for, or running on, a copy engine; its future always completes. */
    private final class CopyTask implements Runnable {
        private final CopyPlan plan;
        private final boolean deviceToHost;
        private final CompletableFuture<Void> future;

        CopyTask(CopyPlan plan, boolean deviceToHost, CompletableFuture<Void> future) {
            this.plan = Objects.requireNonNull(plan, "plan");
            this.deviceToHost = deviceToHost;
            this.future = future;
        }

        @Override
        public void run() {
            CopyEngine engine = deviceToHost ? toHost : toDevice;
            try {
                long started = System.nanoTime();
                long bytes = execute(plan, deviceToHost);
                engine.busyNanos.add(System.nanoTime() - started);
                engine.bytesCopied.add(bytes);
                engine.throttle(bytes);
                future.complete(null);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                future.completeExceptionally(new IllegalStateException(
                        "simulated device closed while " + plan + " was waiting for its bandwidth share", e));
            } catch (Throwable t) {
                future.completeExceptionally(t);
            }
        }

        void fail(Throwable cause) {
            future.completeExceptionally(cause);
        }
    }

    /** The threads of one copy direction, with its byte counter and bandwidth budget. */
    private static final class CopyEngine {
        final LongAdder bytesCopied = new LongAdder();
        final LongAdder busyNanos = new LongAdder();
        private final ThreadPoolExecutor executor;
        private final long bandwidthBytesPerSecond;
        /** {@link System#nanoTime()} at which the bandwidth budget is next free. */
        private final AtomicLong nextFreeNanos = new AtomicLong(System.nanoTime());

        CopyEngine(String threadPrefix, int threads, long bandwidthBytesPerSecond) {
            this.bandwidthBytesPerSecond = bandwidthBytesPerSecond;
            AtomicInteger index = new AtomicInteger();
            this.executor = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
                    new LinkedBlockingQueue<>(), runnable -> {
                        Thread thread = new Thread(runnable, threadPrefix + index.getAndIncrement());
                        thread.setDaemon(true);
                        return thread;
                    });
        }

        CompletableFuture<Void> submit(CopyTask task) {
            try {
                executor.execute(task);
            } catch (RejectedExecutionException e) {
                task.fail(new IllegalStateException("simulated device is closed; " + task.plan + " not copied"));
            }
            return task.future;
        }

        void throttle(long bytes) throws InterruptedException {
            if (bandwidthBytesPerSecond == 0 || bytes == 0) {
                return;
            }
            long costNanos = (long) ((double) bytes * NANOS_PER_SECOND / bandwidthBytesPerSecond);
            long now = System.nanoTime();
            long previous;
            long end;
            do {
                previous = nextFreeNanos.get();
                end = Math.max(previous, now) + costNanos;
            } while (!nextFreeNanos.compareAndSet(previous, end));
            long waitNanos;
            while ((waitNanos = end - System.nanoTime()) > 0) {
                LockSupport.parkNanos(this, waitNanos);
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        }

        void shutdown() {
            List<Runnable> pending = new ArrayList<>(executor.shutdownNow());
            for (Runnable runnable : pending) {
                CopyTask task = (CopyTask) runnable;
                task.fail(new IllegalStateException("simulated device closed before " + task.plan + " ran"));
            }
        }

        void awaitTermination() {
            try {
                executor.awaitTermination(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
