package dev.selene.transport.gpu;

/**
 * The few CUDA driver operations the JCuda copier needs, on raw 64-bit addresses.
 *
 * <p>{@link JCudaBinding} implements it with JCuda; tests implement it on the CPU so that everything above it
 * (validation, batching, piece tables, staging runs, completion and failure) runs without a GPU. Every method
 * makes the driver's context current on the calling thread before it calls CUDA.
 *
 * <p>Host addresses passed to asynchronous copies must lie in memory registered with {@link #registerHost};
 * kernel tables hold device-visible addresses only (device memory, or the device pointer of a registration).
 * There is no synchronous copy: {@code cuMemcpyHtoD} runs on the legacy stream, which the copier's non-blocking
 * streams do not wait for, and from pageable memory it returns before the bytes have landed. Every copy goes on a
 * stream of the copier's, from registered memory, and is waited for through that stream.
 */
interface CudaDriver extends AutoCloseable {

    /** The kernels of {@code gather_scatter.cu}; both copy {@code len[i]} bytes from {@code src[i]} to {@code dst[i]}. */
    enum Kernel {
        /** Publication: device pieces to host slots or to the staging buffer. */
        GATHER("gather"),
        /** Restore: host slots or the staging buffer to device pieces. */
        SCATTER("scatter");

        private final String entry;

        Kernel(String entry) {
            this.entry = entry;
        }

        /** Name of the kernel's entry point in the PTX. */
        String entry() {
            return entry;
        }
    }

    /** A short description of the device, e.g. "NVIDIA H200 (device 0, compute capability 9.0, CUDA driver 13.0)". */
    String describe();

    /** Allocates {@code bytes} of device memory; returns its address (at least 256-byte aligned). */
    long allocate(long bytes);

    /** Frees the allocation that {@link #allocate} returned at {@code address}. */
    void free(long address);

    /** Pins and maps host memory (PORTABLE | DEVICEMAP); returns the device pointer of {@code address}. */
    long registerHost(long address, long bytes);

    /** Undoes {@link #registerHost} for the registration that starts at {@code address}. */
    void unregisterHost(long address);

    /** A new stream; work on it runs in order. */
    Stream createStream();

    /** Releases what the driver holds (modules, the context reference); further calls fail. */
    @Override
    void close();

    /** An in-order queue of device work. */
    interface Stream extends AutoCloseable {

        /** Enqueues a host → device copy; {@code host} must be registered memory. */
        void copyToDevice(long device, long host, long bytes);

        /** Enqueues a device → host copy; {@code host} must be registered memory. */
        void copyToHost(long host, long device, long bytes);

        /** Enqueues a device → device copy. */
        void copyDeviceToDevice(long dst, long src, long bytes);

        /** Enqueues {@code kernel} over the piece table whose three arrays start at the given device addresses. */
        void launch(Kernel kernel, long srcTable, long dstTable, long lenTable, int pieces);

        /** Records an event after everything enqueued so far. */
        Event record();

        /** Waits until everything enqueued so far has run. */
        void synchronize();

        /** Destroys the stream (after its work has run). */
        @Override
        void close();
    }

    /** A point in a stream. */
    interface Event extends AutoCloseable {

        /** Blocks the calling thread until the work before the event has run; throws if it failed. */
        void await();

        @Override
        void close();
    }
}
