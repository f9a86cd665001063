package dev.selene.transport.gpu;

import dev.selene.engine.layout.Layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The JCuda copier's live device allocations: which device ranges a plan may name, and how many queued or running
 * copies use each allocation, so that freeing one waits for them instead of pulling memory from under a kernel.
 *
 * <p>Allocations are keyed by their 4096-aligned start. A range is valid when it lies inside one live allocation;
 * resolving it {@linkplain Allocation#pin() pins} that allocation until the copy {@linkplain Allocation#unpin()
 * unpins} it. {@link #remove} makes new plans fail at once and returns the allocation so the caller can wait for
 * its pins to drain before freeing the memory.
 */
final class DeviceAllocations {

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    /** Live allocations by aligned start; guarded by {@link #lock}. */
    private final TreeMap<Long, Allocation> live = new TreeMap<>();

    /** Address of the first 4096-aligned byte at or after {@code raw}. */
    static long alignUp(long raw) {
        return (raw + Layout.ALIGNMENT_BYTES - 1) & -(long) Layout.ALIGNMENT_BYTES;
    }

    /** Bytes to ask the driver for so that {@code bytes} fit after aligning the start up. */
    static long rawBytesFor(long bytes) {
        return Math.addExact(bytes, Layout.ALIGNMENT_BYTES);
    }

    /** Records an allocation of {@code bytes} usable bytes from {@code raw}; returns it (start = aligned). */
    Allocation add(long raw, long bytes) {
        Allocation allocation = new Allocation(raw, alignUp(raw), bytes);
        lock.writeLock().lock();
        try {
            live.put(allocation.start, allocation);
        } finally {
            lock.writeLock().unlock();
        }
        return allocation;
    }

    /** Takes the allocation that starts at {@code start} out of the live set; an exception if there is none. */
    Allocation remove(long start) {
        lock.writeLock().lock();
        try {
            Allocation allocation = live.remove(start);
            if (allocation == null) {
                throw new IllegalArgumentException(
                        "device address 0x" + Long.toHexString(start) + " is not the start of a device allocation");
            }
            return allocation;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Takes every allocation out of the live set, for close. */
    List<Allocation> removeAll() {
        lock.writeLock().lock();
        try {
            List<Allocation> all = new ArrayList<>(live.values());
            live.clear();
            return all;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Bytes of device memory the live allocations hold (usable bytes, not counting alignment slack). */
    long liveBytes() {
        lock.readLock().lock();
        try {
            long total = 0;
            for (Allocation a : live.values()) {
                total += a.bytes;
            }
            return total;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The allocation that holds {@code [address, address + bytes)}, pinned; an {@link IllegalArgumentException}
     * whose message starts with {@code what} and says the range is outside every device allocation otherwise.
     */
    Allocation pin(String what, long address, long bytes) {
        lock.readLock().lock();
        try {
            Allocation allocation = find(address, bytes);
            if (allocation == null) {
                throw outside(what, address, bytes);
            }
            allocation.pin();
            return allocation;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Pins the allocation of every piece, all or nothing: when one piece is outside, the pieces pinned so far are
     * unpinned again and the exception names the first bad piece.
     */
    Allocation[] pinAll(long[] addresses, int[] lengths) {
        Allocation[] pinned = new Allocation[addresses.length];
        lock.readLock().lock();
        try {
            for (int i = 0; i < addresses.length; i++) {
                Allocation allocation = find(addresses[i], lengths[i]);
                if (allocation == null) {
                    unpinAll(pinned, i);
                    throw outside("copy plan piece " + i + ":", addresses[i], lengths[i]);
                }
                allocation.pin();
                pinned[i] = allocation;
            }
            return pinned;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Unpins the first {@code count} allocations of {@code pinned}. */
    static void unpinAll(Allocation[] pinned, int count) {
        for (int i = 0; i < count; i++) {
            pinned[i].unpin();
        }
    }

    private Allocation find(long address, long bytes) {
        Map.Entry<Long, Allocation> entry = live.floorEntry(address);
        if (entry == null || bytes < 0) {
            return null;
        }
        Allocation allocation = entry.getValue();
        long offset = address - allocation.start;
        return offset <= allocation.bytes - bytes ? allocation : null;
    }

    private static IllegalArgumentException outside(String what, long address, long bytes) {
        return new IllegalArgumentException(what + " device range 0x" + Long.toHexString(address) + " + " + bytes
                + " bytes is outside every device allocation");
    }

    /** One device allocation: the driver's address, the aligned start handed out, and its copy pins. */
    static final class Allocation {
        final long raw;
        final long start;
        final long bytes;
        /** Copies queued or running that use this allocation; guarded by {@code this}. */
        private int pins;

        Allocation(long raw, long start, long bytes) {
            this.raw = raw;
            this.start = start;
            this.bytes = bytes;
        }

        synchronized void pin() {
            pins++;
        }

        synchronized void unpin() {
            if (--pins == 0) {
                notifyAll();
            }
        }

        synchronized int pins() {
            return pins;
        }

        /** Waits until no copy uses the allocation; whether that happened within {@code timeoutNanos}. */
        synchronized boolean awaitUnpinned(long timeoutNanos) throws InterruptedException {
            long deadline = System.nanoTime() + timeoutNanos;
            while (pins > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }

        @Override
        public String toString() {
            return "device allocation 0x" + Long.toHexString(start) + " + " + bytes + " bytes";
        }
    }
}
