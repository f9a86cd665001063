package dev.selene.transport.gpu;

import java.util.concurrent.CompletableFuture;

/**
 * A validated plan on its way through a {@link CudaCopyStream}: the device address, host address and device view of
 * the host address of every piece, the device allocations it keeps pinned, and the future to complete.
 */
final class PendingCopy {
    final CopyPlan plan;
    final long[] device;
    final long[] host;
    final long[] hostView;
    final int[] lengths;
    final long bytes;
    final DeviceAllocations.Allocation[] pinned;
    final CompletableFuture<Void> future = new CompletableFuture<>();
    private boolean released;

    PendingCopy(CopyPlan plan, long[] hostView, DeviceAllocations.Allocation[] pinned) {
        this.plan = plan;
        this.device = plan.device();
        this.host = plan.host();
        this.hostView = hostView;
        this.lengths = plan.lengths();
        this.bytes = plan.totalBytes();
        this.pinned = pinned;
    }

    int pieces() {
        return lengths.length;
    }

    /** Unpins the device allocations (once) and completes the future, with {@code failure} when not null. */
    void finish(Throwable failure) {
        synchronized (this) {
            if (!released) {
                released = true;
                DeviceAllocations.unpinAll(pinned, pinned.length);
            }
        }
        if (failure == null) {
            future.complete(null);
        } else {
            future.completeExceptionally(failure);
        }
    }
}
