package dev.selene.transport.gpu;

import dev.selene.transport.host.HostMemory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The host mappings registered (pinned and mapped) with CUDA, and the device pointer of each: plans name host
 * addresses, kernels need the device's view of them.
 *
 * <p>A mapping is registered once, whole, and {@linkplain #retire retired} when it closes, before it is unmapped;
 * copies into a retired mapping fail with a message saying it is closed. Registrations of mappings that closed
 * without being retired are {@linkplain #removeClosed() swept} before a new one is added, so a new mapping that
 * reuses their address range can be registered.
 */
final class HostRegistrations {

    private final List<Registration> registrations = new CopyOnWriteArrayList<>();
    /** Registrations taken out because their mapping closed: kept only to say so when a plan names them. */
    private final List<Registration> retired = new CopyOnWriteArrayList<>();

    /** Whether {@code host} is registered. */
    boolean contains(HostMemory host) {
        for (Registration r : registrations) {
            if (r.host == host) {
                return true;
            }
        }
        return false;
    }

    void add(HostMemory host, long devicePointer) {
        registrations.add(new Registration(host, host.segment().address(), host.segment().byteSize(), devicePointer));
    }

    /** Takes out and returns the registration of {@code host}, which is closing; {@code null} when it has none. */
    Registration retire(HostMemory host) {
        for (Registration r : registrations) {
            if (r.host == host) {
                registrations.remove(r);
                retired.add(r);
                return r;
            }
        }
        return null;
    }

    /** Takes out and returns the registrations whose mapping is closed. */
    List<Registration> removeClosed() {
        List<Registration> closed = new ArrayList<>();
        for (Registration r : registrations) {
            if (!r.host.isOpen()) {
                closed.add(r);
            }
        }
        registrations.removeAll(closed);
        return closed;
    }

    /** Takes out and returns every registration, for close. */
    List<Registration> removeAll() {
        List<Registration> all = new ArrayList<>(registrations);
        registrations.removeAll(all);
        return all;
    }

    /**
     * The registration holding {@code [address, address + bytes)}; an exception whose message starts with
     * {@code what} otherwise: {@link IllegalArgumentException} when the range is outside every registered mapping,
     * {@link IllegalStateException} when its mapping has been closed.
     */
    Registration resolve(String what, long address, long bytes) {
        for (Registration r : registrations) {
            if (r.contains(address, bytes)) {
                if (!r.host.isOpen()) {
                    throw new IllegalStateException(what + " host range 0x" + Long.toHexString(address)
                            + " lies in " + r.host + ", which is closed");
                }
                return r;
            }
        }
        for (Registration r : retired) {
            if (r.contains(address, bytes)) {
                throw new IllegalStateException(what + " host range 0x" + Long.toHexString(address)
                        + " lies in " + r.host + ", which is closed");
            }
        }
        throw new IllegalArgumentException(what + " host range 0x" + Long.toHexString(address) + " + " + bytes
                + " bytes is outside the registered host mapping"
                + (registrations.isEmpty() ? " (none registered)" : ""));
    }

    /** One registered mapping: its host range and the device pointer of its first byte. */
    record Registration(HostMemory host, long base, long bytes, long devicePointer) {

        boolean contains(long address, long length) {
            long offset = address - base;
            return length >= 0 && offset >= 0 && offset <= bytes - length;
        }

        /** The device's view of host address {@code address} inside this mapping. */
        long deviceView(long address) {
            return devicePointer + (address - base);
        }
    }
}
