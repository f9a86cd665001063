package dev.selene.transport.gpu;

import dev.selene.transport.host.HostMemory;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A device copier that passes every call to another one: the base of a copier that watches or changes a few calls
 * (a benchmark noting which host mapping was registered, a test holding copies back) and leaves the rest alone.
 */
public abstract class ForwardingDeviceCopier implements DeviceCopier {

    private final DeviceCopier delegate;

    protected ForwardingDeviceCopier(DeviceCopier delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The copier every call goes to. */
    public DeviceCopier delegate() {
        return delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public boolean isAvailable() {
        return delegate.isAvailable();
    }

    @Override
    public String unavailabilityCause() {
        return delegate.unavailabilityCause();
    }

    @Override
    public void register(HostMemory host) {
        delegate.register(host);
    }

    @Override
    public long allocateDevice(long bytes) {
        return delegate.allocateDevice(bytes);
    }

    @Override
    public void freeDevice(long address) {
        delegate.freeDevice(address);
    }

    @Override
    public void writeDevice(long address, MemorySegment src) {
        delegate.writeDevice(address, src);
    }

    @Override
    public void readDevice(long address, MemorySegment dst) {
        delegate.readDevice(address, dst);
    }

    @Override
    public CompletableFuture<Void> copyToHost(CopyPlan plan) {
        return delegate.copyToHost(plan);
    }

    @Override
    public CompletableFuture<Void> copyToDevice(CopyPlan plan) {
        return delegate.copyToDevice(plan);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
