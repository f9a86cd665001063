package dev.selene.transport.gpu;

import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static jcuda.driver.JCudaDriver.CU_MEMHOSTREGISTER_DEVICEMAP;
import static jcuda.driver.JCudaDriver.CU_MEMHOSTREGISTER_PORTABLE;

/**
 * {@link CudaDriver} on JCuda 12's driver API: the device's primary context, {@code cuMemAlloc}, host registration
 * with PORTABLE | DEVICEMAP, non-blocking streams, blocking-sync events and the kernels of {@link GatherKernels}.
 *
 * <p>JCuda's exceptions are on ({@link JCudaDriver#setExceptionsEnabled}), so every failed call throws a
 * {@link jcuda.CudaException} naming the CUDA error. The primary context is made current on the calling thread
 * before each call; a thread-local remembers the context last made current so that the hot per-piece path does not
 * repeat {@code cuCtxSetCurrent}.
 *
 * <p>Runs only where {@code libcuda.so.1} and a device exist; exercised by the {@code gpu}-tagged tests and the GPU
 * benchmark, never on a CPU-only build.
 */
final class JCudaBinding implements CudaDriver {

    private static final ThreadLocal<CUcontext> CURRENT = new ThreadLocal<>();

    private final int ordinal;
    private final CUdevice device;
    private final CUcontext context;
    private final CUmodule module;
    private final Map<Kernel, CUfunction> functions = new ConcurrentHashMap<>();
    /** Device allocations by address, keeping the pointer object cuMemAlloc filled in. */
    private final Map<Long, CUdeviceptr> allocations = new ConcurrentHashMap<>();
    private final String description;
    private volatile boolean closed;

    private JCudaBinding(int ordinal, CUdevice device, CUcontext context, CUmodule module, String description) {
        this.ordinal = ordinal;
        this.device = device;
        this.context = context;
        this.module = module;
        this.description = description;
    }

    /**
     * Retains device {@code ordinal}'s primary context and, when {@code loadKernels}, loads the PTX module. A failure
     * is an {@link IllegalStateException} whose one-line message names the call and the CUDA error.
     */
    static JCudaBinding open(int ordinal, boolean loadKernels) {
        JCudaDriver.setExceptionsEnabled(true);
        BoundedCudaCall.call("cuInit", BoundedCudaCall.INIT_LIMIT, () -> {
            checked("cuInit", () -> JCudaDriver.cuInit(0));
            return null;
        });
        int[] count = new int[1];
        checked("cuDeviceGetCount", () -> JCudaDriver.cuDeviceGetCount(count));
        if (ordinal < 0 || ordinal >= count[0]) {
            throw new IllegalArgumentException("CUDA device " + ordinal + " does not exist; allowed: 0.."
                    + (count[0] - 1));
        }
        CUdevice device = new CUdevice();
        checked("cuDeviceGet(" + ordinal + ")", () -> JCudaDriver.cuDeviceGet(device, ordinal));
        CUcontext context = new CUcontext();
        checked("cuDevicePrimaryCtxRetain(device " + ordinal + ")",
                () -> JCudaDriver.cuDevicePrimaryCtxRetain(context, device));
        try {
            checked("cuCtxSetCurrent", () -> JCudaDriver.cuCtxSetCurrent(context));
            CURRENT.set(context);
            String description = describe(device, ordinal);
            CUmodule module = null;
            if (loadKernels) {
                module = new CUmodule();
                CUmodule loading = module;
                try {
                    // On a thread of its own (the context made current there), within a time limit: the driver
                    // JIT-compiles the PTX for the GPU it finds, and a hung driver must not hang the node's start.
                    BoundedCudaCall.call("loading the copy kernels (cuModuleLoadData)",
                            BoundedCudaCall.MODULE_LOAD_LIMIT, () -> {
                                JCudaDriver.cuCtxSetCurrent(context);
                                JCudaDriver.cuModuleLoadData(loading, GatherKernels.ptxImage());
                                return null;
                            });
                } catch (BoundedCudaCall.TimedOut e) {
                    throw new IllegalStateException(e.getMessage() + "; this is " + description, e);
                } catch (RuntimeException e) {
                    throw new IllegalStateException("loading the copy kernels (cuModuleLoadData of "
                            + GatherKernels.RESOURCE + ") failed: " + e.getMessage() + "; they need a GPU of compute "
                            + "capability " + GatherKernels.MIN_COMPUTE_CAPABILITY / 10 + "."
                            + GatherKernels.MIN_COMPUTE_CAPABILITY % 10 + " or newer and a CUDA 12.0 or newer driver; "
                            + "this is " + description, e);
                }
            }
            JCudaBinding binding = new JCudaBinding(ordinal, device, context, module, description);
            if (module != null) {
                for (Kernel kernel : Kernel.values()) {
                    CUfunction function = new CUfunction();
                    CUmodule loaded = module;
                    checked("cuModuleGetFunction(" + kernel.entry() + ")",
                            () -> JCudaDriver.cuModuleGetFunction(function, loaded, kernel.entry()));
                    binding.functions.put(kernel, function);
                }
            }
            return binding;
        } catch (RuntimeException e) {
            try {
                JCudaDriver.cuDevicePrimaryCtxRelease(device);
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private static String describe(CUdevice device, int ordinal) {
        byte[] name = new byte[256];
        JCudaDriver.cuDeviceGetName(name, name.length, device);
        int end = 0;
        while (end < name.length && name[end] != 0) {
            end++;
        }
        int[] major = new int[1];
        int[] minor = new int[1];
        JCudaDriver.cuDeviceGetAttribute(major, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                device);
        JCudaDriver.cuDeviceGetAttribute(minor, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                device);
        int[] version = new int[1];
        JCudaDriver.cuDriverGetVersion(version);
        return new String(name, 0, end, StandardCharsets.US_ASCII) + " (device " + ordinal + ", compute capability "
                + major[0] + "." + minor[0] + ", CUDA driver " + version[0] / 1000 + "." + version[0] % 1000 / 10
                + ")";
    }

    /** Runs one driver call; its failure becomes an exception naming {@code what} and the CUDA error, on one line. */
    private static void checked(String what, Runnable call) {
        try {
            call.run();
        } catch (CudaException e) {
            throw new IllegalStateException(what + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public long allocate(long bytes) {
        current();
        CUdeviceptr pointer = new CUdeviceptr();
        checked("cuMemAlloc of " + bytes + " bytes", () -> JCudaDriver.cuMemAlloc(pointer, bytes));
        long address = CudaPointers.address(pointer);
        allocations.put(address, pointer);
        return address;
    }

    @Override
    public void free(long address) {
        current();
        CUdeviceptr pointer = allocations.remove(address);
        JCudaDriver.cuMemFree(pointer != null ? pointer : CudaPointers.device(address));
    }

    @Override
    public long registerHost(long address, long bytes) {
        current();
        Pointer host = CudaPointers.host(address);
        checked("cuMemHostRegister of " + bytes + " bytes at 0x" + Long.toHexString(address),
                () -> JCudaDriver.cuMemHostRegister(host, bytes,
                        CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
        try {
            CUdeviceptr view = new CUdeviceptr();
            checked("cuMemHostGetDevicePointer", () -> JCudaDriver.cuMemHostGetDevicePointer(view, host, 0));
            return CudaPointers.address(view);
        } catch (RuntimeException e) {
            JCudaDriver.cuMemHostUnregister(host);
            throw e;
        }
    }

    @Override
    public void unregisterHost(long address) {
        current();
        checked("cuMemHostUnregister at 0x" + Long.toHexString(address),
                () -> JCudaDriver.cuMemHostUnregister(CudaPointers.host(address)));
    }

    @Override
    public Stream createStream() {
        current();
        CUstream stream = new CUstream();
        JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
        return new JCudaStream(stream);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            JCudaDriver.cuCtxSetCurrent(context);
            if (module != null) {
                JCudaDriver.cuModuleUnload(module);
            }
        } finally {
            JCudaDriver.cuDevicePrimaryCtxRelease(device);
            CURRENT.remove();
        }
    }

    @Override
    public String toString() {
        return "JCudaBinding[" + description + "]";
    }

    private void current() {
        if (closed) {
            throw new IllegalStateException("CUDA device " + ordinal + " binding is closed");
        }
        if (CURRENT.get() != context) {
            JCudaDriver.cuCtxSetCurrent(context);
            CURRENT.set(context);
        }
    }

    private final class JCudaStream implements Stream {
        private final CUstream stream;

        JCudaStream(CUstream stream) {
            this.stream = stream;
        }

        @Override
        public void copyToDevice(long device, long host, long bytes) {
            current();
            JCudaDriver.cuMemcpyHtoDAsync(CudaPointers.device(device), CudaPointers.host(host), bytes, stream);
        }

        @Override
        public void copyToHost(long host, long device, long bytes) {
            current();
            JCudaDriver.cuMemcpyDtoHAsync(CudaPointers.host(host), CudaPointers.device(device), bytes, stream);
        }

        @Override
        public void copyDeviceToDevice(long dst, long src, long bytes) {
            current();
            JCudaDriver.cuMemcpyDtoDAsync(CudaPointers.device(dst), CudaPointers.device(src), bytes, stream);
        }

        @Override
        public void launch(Kernel kernel, long srcTable, long dstTable, long lenTable, int pieces) {
            current();
            CUfunction function = functions.get(kernel);
            if (function == null) {
                throw new IllegalStateException("kernel " + kernel.entry() + " is not loaded (per-piece binding)");
            }
            Pointer parameters = Pointer.to(
                    Pointer.to(new long[] {srcTable}),
                    Pointer.to(new long[] {dstTable}),
                    Pointer.to(new long[] {lenTable}),
                    Pointer.to(new int[] {pieces}));
            JCudaDriver.cuLaunchKernel(function, GatherKernels.gridBlocks(pieces), 1, 1,
                    GatherKernels.BLOCK_THREADS, 1, 1, 0, stream, parameters, null);
        }

        @Override
        public Event record() {
            current();
            CUevent event = new CUevent();
            JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_BLOCKING_SYNC | CUevent_flags.CU_EVENT_DISABLE_TIMING);
            try {
                JCudaDriver.cuEventRecord(event, stream);
            } catch (RuntimeException e) {
                JCudaDriver.cuEventDestroy(event);
                throw e;
            }
            return new JCudaEvent(event);
        }

        @Override
        public void synchronize() {
            current();
            JCudaDriver.cuStreamSynchronize(stream);
        }

        @Override
        public void close() {
            current();
            JCudaDriver.cuStreamDestroy(stream);
        }
    }

    private final class JCudaEvent implements Event {
        private final CUevent event;

        JCudaEvent(CUevent event) {
            this.event = event;
        }

        @Override
        public void await() {
            current();
            JCudaDriver.cuEventSynchronize(event);
        }

        @Override
        public void close() {
            current();
            JCudaDriver.cuEventDestroy(event);
        }
    }
}
