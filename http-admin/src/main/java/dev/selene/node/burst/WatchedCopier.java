package dev.selene.node.burst;

import dev.selene.transport.gpu.CopyPlan;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.host.HostMemory;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * A device copier that remembers the host mapping a node registered with it last: how the burst's raw copy finds the
 * node's own slots, so that it writes the very memory the publications write. Every call goes to {@code device}.
 */
final class WatchedCopier implements DeviceCopier {

    private final DeviceCopier device;
    private volatile HostMemory registered;

    WatchedCopier(DeviceCopier device) {
        this.device = device;
    }

    /** The copier underneath. */
    DeviceCopier device() {
        return device;
    }

    /** The host mapping registered last, or null before any. */
    HostMemory registered() {
        return registered;
    }

    @Override
    public String name() {
        return device.name();
    }

    @Override
    public boolean isAvailable() {
        return device.isAvailable();
    }

    @Override
    public String unavailabilityCause() {
        return device.unavailabilityCause();
    }

    @Override
    public void register(HostMemory host) {
        device.register(host);
        registered = host;
    }

    @Override
    public long allocateDevice(long bytes) {
        return device.allocateDevice(bytes);
    }

    @Override
    public void freeDevice(long address) {
        device.freeDevice(address);
    }

    @Override
    public void writeDevice(long address, MemorySegment src) {
        device.writeDevice(address, src);
    }

    @Override
    public void readDevice(long address, MemorySegment dst) {
        device.readDevice(address, dst);
    }

    @Override
    public CompletableFuture<Void> copyToHost(CopyPlan plan) {
        return device.copyToHost(plan);
    }

    @Override
    public CompletableFuture<Void> copyToDevice(CopyPlan plan) {
        return device.copyToDevice(plan);
    }

    @Override
    public void close() {
        device.close();
    }
}
