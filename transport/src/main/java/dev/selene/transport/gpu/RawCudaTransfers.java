package dev.selene.transport.gpu;

import java.util.Objects;

/**
 * Plain copy-engine transfers on a JCuda copier's device memory and registered host memory, outside its plans and
 * batching: the ceiling (one large transfer) and the baseline (one transfer per piece) that benchmarks measure the
 * copier against, on the same bytes, in the same run.
 *
 * <p>Every range is checked like a plan's (device ranges inside one live allocation, host ranges inside a
 * registered mapping) before it is enqueued, so a wrong address fails here rather than on the device. Not for
 * production paths: it enqueues on the calling thread and {@link #synchronize()} blocks it.
 */
public final class RawCudaTransfers implements AutoCloseable {

    private final JCudaDeviceCopier copier;
    private final CudaDriver.Stream stream;

    private RawCudaTransfers(JCudaDeviceCopier copier) {
        this.copier = copier;
        this.stream = copier.driver().createStream();
    }

    /** Transfers on a stream of their own, on {@code copier}'s device. */
    public static RawCudaTransfers on(JCudaDeviceCopier copier) {
        return new RawCudaTransfers(Objects.requireNonNull(copier, "copier"));
    }

    /** Enqueues a device → host transfer of {@code bytes} bytes. */
    public void copyToHost(long host, long device, long bytes) {
        copier.checkRaw(device, host, bytes);
        stream.copyToHost(host, device, bytes);
    }

    /** Enqueues a host → device transfer of {@code bytes} bytes. */
    public void copyToDevice(long device, long host, long bytes) {
        copier.checkRaw(device, host, bytes);
        stream.copyToDevice(device, host, bytes);
    }

    /** Blocks until every transfer enqueued so far has landed. */
    public void synchronize() {
        stream.synchronize();
    }

    @Override
    public void close() {
        stream.synchronize();
        stream.close();
    }
}
