package dev.selene.node.burst;

import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.ForwardingDeviceCopier;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.host.HostMemory;

/**
 * A device copier that remembers the host mapping a node registered with it last: how the burst's raw copy finds the
 * node's own slots, so that it writes the very memory the publications write. Every call goes to the device.
 */
final class WatchedCopier extends ForwardingDeviceCopier {

    private volatile HostMemory registered;

    WatchedCopier(DeviceCopier device) {
        super(device);
    }

    /** The host mapping registered last, or null before any. */
    HostMemory registered() {
        return registered;
    }

    @Override
    public void register(HostMemory host) {
        super.register(host);
        registered = host;
    }

    /** The host slots the node registered with {@code copier} (the node has started by now). */
    static HostMemory nodeSlots(DeviceCopier copier) {
        HostMemory slots = copier instanceof WatchedCopier w ? w.registered() : null;
        if (slots == null || !slots.isOpen()) {
            throw new IllegalStateException("the node registered no host slots with the device; no raw copy baseline");
        }
        return slots;
    }

    /** The simulated device under {@code copier}, or null on a GPU. */
    static SimulatedDevice simulated(DeviceCopier copier) {
        DeviceCopier device = copier instanceof WatchedCopier w ? w.delegate() : copier;
        return device instanceof SimulatedDevice sim ? sim : null;
    }
}
