package dev.selene.transport.gpu;

import dev.selene.transport.host.HostMemory;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * Moves record bytes between device (GPU) memory and the registered host mapping: asynchronous plan copies for
 * publication (device → host) and restore (host → device), plus synchronous single-buffer access used only to
 * fill snapshots and verify restores.
 *
 * <p>Contract shared by every implementation (checked by {@code DeviceCopierContract}):
 * <ul>
 *   <li>A plan copy returns at once; its future completes on a copier thread, never by blocking the caller.</li>
 *   <li>A plan that names bytes outside a device allocation or outside the registered host mapping completes its
 *       future exceptionally with a message naming the piece and the range; nothing is copied and the copier
 *       keeps working. It never crashes the JVM.</li>
 *   <li>A plan copies exactly its pieces; bytes next to them, in neighbouring slots or allocations, are not
 *       touched.</li>
 *   <li>{@link #close()} fails copies that have not run yet and frees every device allocation.</li>
 * </ul>
 */
public interface DeviceCopier extends AutoCloseable {

    /** Short name for logs and metrics, e.g. {@code simulated} or {@code cuda}. */
    String name();

    /** Whether this copier can move bytes on this machine. */
    boolean isAvailable();

    /** Why this copier cannot be used here, or {@code null} when it {@link #isAvailable() is available}. */
    String unavailabilityCause();

    /** Registers (pins) the whole host mapping once; plans may then name any address inside it. */
    void register(HostMemory host);

    /** Allocates {@code bytes} of device memory aligned to 4096 bytes and returns its device address. */
    long allocateDevice(long bytes);

    /** Frees the device allocation that starts at {@code address}. */
    void freeDevice(long address);

    /** Copies {@code src} to device memory at {@code address} and returns when done; for snapshots and tests. */
    void writeDevice(long address, MemorySegment src);

    /** Copies {@code dst.byteSize()} bytes of device memory at {@code address} into {@code dst}; for verification. */
    void readDevice(long address, MemorySegment dst);

    /** Copies every piece of {@code plan} from device to host (publication); completes when all have landed. */
    CompletableFuture<Void> copyToHost(CopyPlan plan);

    /** Copies every piece of {@code plan} from host to device (restore); completes when all have landed. */
    CompletableFuture<Void> copyToDevice(CopyPlan plan);

    /** Fails copies that have not run, waits briefly for running ones, and frees all device memory. */
    @Override
    void close();
}
