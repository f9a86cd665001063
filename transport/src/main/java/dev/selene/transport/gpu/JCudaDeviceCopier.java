package dev.selene.transport.gpu;

import dev.selene.transport.host.HostMemory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The {@link DeviceCopier} of a real NVIDIA GPU, through JCuda's driver API.
 *
 * <p>What it does (one slot pool):
 * <ul>
 *   <li>Uses the device's primary context and makes it current on every thread that calls CUDA: callers of this
 *       class and its own copy threads.</li>
 *   <li>{@link #register} pins and maps a whole host mapping once ({@code cuMemHostRegister} with PORTABLE and
 *       DEVICEMAP); closing the mapping unregisters it first, before it is unmapped ({@link #close} unregisters
 *       mappings still open).</li>
 *   <li>Device memory comes from {@code cuMemAlloc}, 4096-aligned.</li>
 *   <li>{@link #copyToHost} and {@link #copyToDevice} validate the whole plan on the caller's thread (every device
 *       range inside one live allocation, every host range inside a registered, open mapping; a bad plan fails its
 *       future and copies nothing), then queue it for its direction's {@link CudaCopyStream}: its own stream, a
 *       submitter thread that batches queued plans into one kernel launch (or per-piece copies, by {@link CopyMode}),
 *       and a completion thread that waits for the batch's event and completes the futures. The caller never
 *       blocks, and neither does an actor that pipes the future to itself.</li>
 *   <li>Device allocations named by a queued or running copy stay allocated: {@link #freeDevice} waits for them.</li>
 *   <li>{@link #writeDevice} and {@link #readDevice} copy through a registered bounce buffer on a stream of their
 *       own and return only once that stream has run the copy: the bytes are on the device (or the host) before
 *       the call returns, so a plan submitted next, on a copy stream, sees them. (A synchronous {@code cuMemcpyHtoD}
 *       from pageable memory returns once the bytes are staged, on the legacy stream, which the copy streams, being
 *       non-blocking, do not wait for.)</li>
 *   <li>A failure the device reports (an event that fails: an illegal address, a launch failure) leaves the CUDA
 *       context failed, and every later CUDA call would fail with it. The copier then says so
 *       ({@link #isAvailable()} is false, {@link #unavailabilityCause()} names the error) and refuses every later
 *       copy, allocation and access at once with that reason, without calling CUDA.</li>
 * </ul>
 *
 * <p>Everything above the CUDA calls runs on the CPU in tests against an emulated {@link CudaDriver}; the calls
 * themselves ({@link JCudaBinding}) run only where a GPU is present, in the {@code gpu}-tagged tests.
 */
public final class JCudaDeviceCopier implements DeviceCopier {

    private static final Logger log = LoggerFactory.getLogger(JCudaDeviceCopier.class);
    /** How long {@link #close()} and {@link #freeDevice} wait for copies in flight. */
    private static final long IN_FLIGHT_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** How long a copier that failed to start waits for its first stream's idle threads to end. */
    private static final long START_FAILURE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** Size of the registered bounce buffer of {@link #writeDevice} and {@link #readDevice}. */
    static final long BOUNCE_BYTES = 4L << 20;

    private final CudaDriver driver;
    private final CopyMode mode;
    private final DeviceAllocations allocations = new DeviceAllocations();
    private final HostRegistrations hosts = new HostRegistrations();
    private final CudaCopyStream toHost;
    private final CudaCopyStream toDevice;
    /** Allocations whose copies did not drain in time when freed; released with the context at close. */
    private final List<DeviceAllocations.Allocation> abandoned = new ArrayList<>();
    /** Guards the stream and bounce buffer of {@link #writeDevice} and {@link #readDevice}: one caller at a time. */
    private final Object direct = new Object();
    private CudaDriver.Stream directStream;
    private Arena bounceArena;
    private MemorySegment bounce;
    /** Why the CUDA context is unusable (the device reported a failure); null while it works. */
    private volatile String contextFailure;
    private volatile boolean closed;

    private JCudaDeviceCopier(CudaDriver driver, CopyMode mode, CudaCopyStream.Settings settings) {
        this.driver = driver;
        this.mode = mode;
        CudaCopyStream d2h = null;
        try {
            d2h = new CudaCopyStream(driver, CudaCopyStream.Direction.TO_HOST, mode, settings, this::contextFailed);
            this.toHost = d2h;
            this.toDevice = new CudaCopyStream(driver, CudaCopyStream.Direction.TO_DEVICE, mode, settings,
                    this::contextFailed);
        } catch (RuntimeException e) {
            if (d2h != null) {
                d2h.close(START_FAILURE_WAIT_NANOS);
            }
            driver.close();
            throw e;
        }
    }

    /** A copier on device 0 in the mode that {@link CopyMode#fromSystemProperty()} names. */
    public static JCudaDeviceCopier create() {
        return create(CopyMode.fromSystemProperty(), 0);
    }

    /**
     * A copier on device {@code ordinal} in mode {@code mode}; an {@link IllegalStateException} with
     * {@link CudaProbe}'s cause when CUDA is unavailable here.
     */
    public static JCudaDeviceCopier create(CopyMode mode, int ordinal) {
        Objects.requireNonNull(mode, "mode");
        String cause = CudaProbe.unavailabilityCause();
        if (cause != null) {
            throw new IllegalStateException("the JCuda device copier needs CUDA, which is unavailable: " + cause);
        }
        CudaDriver driver = JCudaBinding.open(ordinal, mode != CopyMode.PER_PIECE);
        return new JCudaDeviceCopier(driver, mode, CudaCopyStream.Settings.DEFAULT);
    }

    /** A copier over {@code driver}: for tests that emulate the driver on the CPU. */
    static JCudaDeviceCopier over(CudaDriver driver, CopyMode mode, CudaCopyStream.Settings settings) {
        return new JCudaDeviceCopier(driver, mode, settings);
    }

    @Override
    public String name() {
        return "cuda";
    }

    /** False once the CUDA context has failed: every later CUDA call would fail, so the copier takes no more work. */
    @Override
    public boolean isAvailable() {
        return contextFailure == null;
    }

    /** Why the copier takes no more work (the CUDA error that failed the context, on one line); null while it does. */
    @Override
    public String unavailabilityCause() {
        return contextFailure;
    }

    /** The device reported {@code error}: the context is failed for good; said once, at ERROR. */
    private void contextFailed(String error) {
        synchronized (direct) {
            if (contextFailure != null) {
                return;
            }
            contextFailure = "the CUDA context of " + driver.describe() + " failed (" + oneLine(error) + "): every "
                    + "later CUDA call fails until the process restarts, so this copier takes no more work";
        }
        log.error("cuda: {}", contextFailure);
    }

    private static String oneLine(String message) {
        String m = String.valueOf(message).strip();
        int newline = m.indexOf('\n');
        return newline < 0 ? m : m.substring(0, newline).strip();
    }

    /** How this copier moves pieces. */
    public CopyMode mode() {
        return mode;
    }

    /** The device, e.g. "NVIDIA H200 (device 0, compute capability 9.0, CUDA driver 13.0)". */
    public String device() {
        return driver.describe();
    }

    /** Bytes of plans copied device → host so far. */
    public long bytesCopiedToHost() {
        return toHost.bytesCopied();
    }

    /** Bytes of plans copied host → device so far. */
    public long bytesCopiedToDevice() {
        return toDevice.bytesCopied();
    }

    /** Batches enqueued so far, both directions (one kernel launch each in the kernel modes). */
    public long batches() {
        return toHost.batches() + toDevice.batches();
    }

    /** Bytes of device memory currently allocated through {@link #allocateDevice}. */
    public long allocatedBytes() {
        return allocations.liveBytes();
    }

    /** The driver under this copier, for {@link RawCudaTransfers}. */
    CudaDriver driver() {
        ensureOpen();
        return driver;
    }

    /** Checks a raw transfer's ranges as a plan's would be; an {@link IllegalArgumentException} naming the bad one. */
    void checkRaw(long device, long host, long bytes) {
        allocations.pin("raw transfer:", device, bytes).unpin();
        hosts.resolve("raw transfer:", host, bytes);
    }

    @Override
    public synchronized void register(HostMemory host) {
        Objects.requireNonNull(host, "host");
        ensureUsable();
        if (hosts.contains(host)) {
            return;
        }
        if (!host.isOpen()) {
            throw new IllegalStateException(host + " is closed; it cannot be registered");
        }
        for (HostRegistrations.Registration stale : hosts.removeClosed()) {
            unregister(stale);
        }
        long started = System.nanoTime();
        long devicePointer = driver.registerHost(host.segment().address(), host.segment().byteSize());
        hosts.add(host, devicePointer);
        host.beforeUnmap(() -> unregisterBeforeUnmap(host));
        log.debug("registered {} with CUDA in {} ms", host, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    }

    @Override
    public long allocateDevice(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("device allocation of " + bytes + " bytes is invalid; allowed: ≥ 1");
        }
        ensureUsable();
        long raw = driver.allocate(DeviceAllocations.rawBytesFor(bytes));
        return allocations.add(raw, bytes).start;
    }

    @Override
    public void freeDevice(long address) {
        DeviceAllocations.Allocation allocation = allocations.remove(address);
        try {
            if (!allocation.awaitUnpinned(IN_FLIGHT_WAIT_NANOS)) {
                synchronized (abandoned) {
                    abandoned.add(allocation);
                }
                throw new IllegalStateException(allocation + " is still used by " + allocation.pins()
                        + " copies after " + TimeUnit.NANOSECONDS.toSeconds(IN_FLIGHT_WAIT_NANOS)
                        + " s; it stays allocated until the copier closes");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            synchronized (abandoned) {
                abandoned.add(allocation);
            }
            throw new IllegalStateException("interrupted while " + allocation + " waited for its copies", e);
        }
        if (contextFailure != null) {
            // The context is failed: cuMemFree fails too. The books are released; the memory goes with the process.
            quietly("free " + allocation, () -> driver.free(allocation.raw));
            return;
        }
        driver.free(allocation.raw);
    }

    @Override
    public void writeDevice(long address, MemorySegment src) {
        ensureUsable();
        long bytes = src.byteSize();
        DeviceAllocations.Allocation allocation = allocations.pin("writeDevice:", address, bytes);
        try {
            if (bytes > 0) {
                throughBounce(address, src, true);
            }
        } finally {
            allocation.unpin();
        }
    }

    @Override
    public void readDevice(long address, MemorySegment dst) {
        ensureUsable();
        long bytes = dst.byteSize();
        DeviceAllocations.Allocation allocation = allocations.pin("readDevice:", address, bytes);
        try {
            if (bytes > 0) {
                throughBounce(address, dst, false);
            }
        } finally {
            allocation.unpin();
        }
    }

    /**
     * Copies {@code host} to ({@code toDevice}) or from device memory at {@code device}, through the registered bounce
     * buffer, on the direct stream, waiting for that stream after each chunk: when it returns, the bytes have landed.
     */
    private void throughBounce(long device, MemorySegment host, boolean toDevice) {
        synchronized (direct) {
            ensureUsable();
            try {
                if (directStream == null) {
                    directStream = driver.createStream();
                }
                if (bounce == null) {
                    Arena arena = Arena.ofShared();
                    try {
                        MemorySegment segment = arena.allocate(BOUNCE_BYTES, 4096);
                        driver.registerHost(segment.address(), BOUNCE_BYTES);
                        bounceArena = arena;
                        bounce = segment;
                    } catch (RuntimeException e) {
                        arena.close();
                        throw e;
                    }
                }
                long bytes = host.byteSize();
                for (long offset = 0; offset < bytes; offset += BOUNCE_BYTES) {
                    long chunk = Math.min(BOUNCE_BYTES, bytes - offset);
                    if (toDevice) {
                        MemorySegment.copy(host, offset, bounce, 0, chunk);
                        directStream.copyToDevice(device + offset, bounce.address(), chunk);
                        awaitDirect();
                    } else {
                        directStream.copyToHost(bounce.address(), device + offset, chunk);
                        awaitDirect();
                        MemorySegment.copy(bounce, 0, host, offset, chunk);
                    }
                }
            } catch (DeviceFailure e) {
                contextFailed(e.getMessage());
                throw new IllegalStateException(contextFailure, e);
            } catch (RuntimeException e) {
                if (CudaCopyStream.isContextFatal(e.getMessage())) {
                    contextFailed(e.getMessage());
                    throw new IllegalStateException(contextFailure, e);
                }
                throw e;
            }
        }
    }

    /** Waits for the direct stream; a failure there is the device's, and fails the context. */
    private void awaitDirect() {
        try {
            directStream.synchronize();
        } catch (RuntimeException e) {
            throw new DeviceFailure(e.getMessage(), e);
        }
    }

    /** A failure the device reported while the direct stream ran. */
    private static final class DeviceFailure extends RuntimeException {
        DeviceFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    @Override
    public CompletableFuture<Void> copyToHost(CopyPlan plan) {
        return submit(plan, toHost);
    }

    @Override
    public CompletableFuture<Void> copyToDevice(CopyPlan plan) {
        return submit(plan, toDevice);
    }

    private CompletableFuture<Void> submit(CopyPlan plan, CudaCopyStream stream) {
        Objects.requireNonNull(plan, "plan");
        if (closed) {
            return CompletableFuture.failedFuture(
                    new IllegalStateException("cuda device copier is closed; " + plan + " not copied"));
        }
        String failure = contextFailure;
        if (failure != null) {
            return CompletableFuture.failedFuture(new IllegalStateException(failure));
        }
        DeviceAllocations.Allocation[] pinned;
        try {
            pinned = allocations.pinAll(plan.device(), plan.lengths());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        long[] hostView = new long[plan.pieces()];
        try {
            for (int i = 0; i < plan.pieces(); i++) {
                HostRegistrations.Registration registration = hosts.resolve("copy plan piece " + i + ":",
                        plan.host()[i], plan.lengths()[i]);
                hostView[i] = registration.deviceView(plan.host()[i]);
            }
        } catch (RuntimeException e) {
            DeviceAllocations.unpinAll(pinned, pinned.length);
            return CompletableFuture.failedFuture(e);
        }
        PendingCopy copy = new PendingCopy(plan, hostView, pinned);
        stream.submit(copy);
        return copy.future;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        toHost.close(IN_FLIGHT_WAIT_NANOS);
        toDevice.close(IN_FLIGHT_WAIT_NANOS);
        for (DeviceAllocations.Allocation allocation : allocations.removeAll()) {
            quietly("free " + allocation, () -> driver.free(allocation.raw));
        }
        synchronized (abandoned) {
            for (DeviceAllocations.Allocation allocation : abandoned) {
                quietly("free " + allocation, () -> driver.free(allocation.raw));
            }
            abandoned.clear();
        }
        for (HostRegistrations.Registration registration : hosts.removeAll()) {
            unregister(registration);
        }
        synchronized (direct) {
            if (directStream != null) {
                quietly("destroy the direct stream", directStream::close);
                directStream = null;
            }
            if (bounce != null) {
                long address = bounce.address();
                quietly("unregister the bounce buffer", () -> driver.unregisterHost(address));
                bounceArena.close();
                bounce = null;
                bounceArena = null;
            }
        }
        driver.close();
    }

    @Override
    public String toString() {
        return "JCudaDeviceCopier[" + mode.label() + (closed ? ", closed" : "") + "]";
    }

    /**
     * Unregisters {@code host}, which is closing and still mapped: CUDA must let go of pinned pages before they are
     * unmapped. Nothing to do when the copier closed first (it unregistered everything then).
     */
    private synchronized void unregisterBeforeUnmap(HostMemory host) {
        if (closed) {
            return;
        }
        HostRegistrations.Registration registration = hosts.retire(host);
        if (registration != null) {
            unregister(registration);
        }
    }

    private void unregister(HostRegistrations.Registration registration) {
        quietly("unregister " + registration.host(), () -> driver.unregisterHost(registration.base()));
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("cuda device copier is closed");
        }
    }

    /** Open, and its context has not failed; otherwise an {@link IllegalStateException} saying which. */
    private void ensureUsable() {
        ensureOpen();
        String failure = contextFailure;
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
    }

    private static void quietly(String what, Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            log.warn("cuda: {} failed: {}", what, e.getMessage());
        }
    }
}
