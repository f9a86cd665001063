package dev.selene.transport.gpu;

import dev.selene.transport.host.HostMemory;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test double for fault injection: a CUDA driver over the CPU-emulated one that fails a chosen call with a CUDA
 * error, counts the calls that allocate or pin memory, and notes for each host unregistration whether the mapping
 * was still mapped. Public so that other modules' tests can start a real {@link JCudaDeviceCopier} on it.
 */
public final class FaultInjectingCudaDriver implements CudaDriver {

    /** The driver calls it counts and can fail. */
    public enum Call {
        ALLOCATE("cuMemAlloc"), FREE("cuMemFree"), REGISTER_HOST("cuMemHostRegister"),
        UNREGISTER_HOST("cuMemHostUnregister"), CREATE_STREAM("cuStreamCreate");

        final String cuda;

        Call(String cuda) {
            this.cuda = cuda;
        }
    }

    private final JCudaEmulatedCopierTest.EmulatedDriver real = new JCudaEmulatedCopierTest.EmulatedDriver();
    private final Map<Call, AtomicInteger> counts = new EnumMap<>(Call.class);
    /** Per call: the CUDA error it fails with, and after how many successful calls it starts failing. */
    private final Map<Call, Fault> faults = new EnumMap<>(Call.class);
    private final List<HostMemory> watched = new CopyOnWriteArrayList<>();
    private final List<String> unregistrations = new CopyOnWriteArrayList<>();

    public FaultInjectingCudaDriver() {
        for (Call call : Call.values()) {
            counts.put(call, new AtomicInteger());
        }
    }

    /** Makes every later {@code call} fail with {@code cudaError} (e.g. {@code CUDA_ERROR_OUT_OF_MEMORY}). */
    public FaultInjectingCudaDriver failing(Call call, String cudaError) {
        return failingAfter(call, calls(call), cudaError);
    }

    /** Makes {@code call} fail with {@code cudaError} once it has been made {@code calls} times in all. */
    public synchronized FaultInjectingCudaDriver failingAfter(Call call, int calls, String cudaError) {
        faults.put(call, new Fault(Objects.requireNonNull(cudaError, "cudaError"), calls));
        return this;
    }

    /**
     * The next operation a stream runs fails on the device with {@code cudaError} (e.g.
     * {@code CUDA_ERROR_ILLEGAL_ADDRESS}), and the context stays failed: every later call fails, as on a GPU.
     */
    public void failNextDeviceOperation(String cudaError) {
        real.failNextOperation(cudaError + " (injected)");
    }

    /** How many times {@code call} was made, failed ones included. */
    public int calls(Call call) {
        return counts.get(call).get();
    }

    /** Device allocations not freed yet. */
    public int liveAllocations() {
        return real.liveAllocations();
    }

    /** Host registrations not undone yet. */
    public int liveRegistrations() {
        return real.registrations();
    }

    /** Whether the copier closed the driver. */
    public boolean isClosed() {
        return real.closed.get();
    }

    /** Notes, at each unregistration of {@code host}, whether it was still mapped; see {@link #unregistrations()}. */
    public void watch(HostMemory host) {
        watched.add(host);
    }

    /** One entry per unregistration of a watched mapping: "mapped" or "unmapped" at the time of the call. */
    public List<String> unregistrations() {
        return new ArrayList<>(unregistrations);
    }

    /** A JCuda copier in {@code mode} (default batch limits) over this driver. */
    public JCudaDeviceCopier copier(CopyMode mode) {
        return JCudaDeviceCopier.over(this, mode, CudaCopyStream.Settings.DEFAULT);
    }

    /** A JCuda copier in {@code mode} with the given batch limits over this driver. */
    JCudaDeviceCopier copier(CopyMode mode, CudaCopyStream.Settings settings) {
        return JCudaDeviceCopier.over(this, mode, settings);
    }

    @Override
    public String describe() {
        return "fault-injecting " + real.describe();
    }

    @Override
    public long allocate(long bytes) {
        call(Call.ALLOCATE, " of " + bytes + " bytes");
        return real.allocate(bytes);
    }

    @Override
    public void free(long address) {
        call(Call.FREE, " at 0x" + Long.toHexString(address));
        real.free(address);
    }

    @Override
    public long registerHost(long address, long bytes) {
        call(Call.REGISTER_HOST, " of " + bytes + " bytes at 0x" + Long.toHexString(address));
        return real.registerHost(address, bytes);
    }

    @Override
    public void unregisterHost(long address) {
        for (HostMemory host : watched) {
            if (host.segment().address() == address) {
                unregistrations.add(host.isOpen() ? "mapped" : "unmapped");
            }
        }
        call(Call.UNREGISTER_HOST, " at 0x" + Long.toHexString(address));
        real.unregisterHost(address);
    }

    @Override
    public Stream createStream() {
        call(Call.CREATE_STREAM, "");
        return real.createStream();
    }

    @Override
    public void close() {
        real.close();
    }

    /** Counts {@code call}; throws as JCudaBinding does (the call, then the CUDA error) when it is to fail. */
    private void call(Call call, String detail) {
        int made = counts.get(call).getAndIncrement();
        Fault fault;
        synchronized (this) {
            fault = faults.get(call);
        }
        if (fault != null && made >= fault.after) {
            throw new IllegalStateException(call.cuda + detail + " failed: " + fault.cudaError + " (injected)");
        }
    }

    private record Fault(String cudaError, int after) {
    }
}
