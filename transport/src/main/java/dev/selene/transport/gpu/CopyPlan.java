package dev.selene.transport.gpu;

import java.util.Objects;

/**
 * The piece copies of one transfer between device and host: entry i copies {@code lengths[i]} bytes between
 * device address {@code device[i]} and host address {@code host[i]}, in the direction the copier is asked for.
 *
 * <p>The plan takes ownership of its arrays (they are not copied, to keep planning allocation-light); nobody
 * may change them after building the plan.
 *
 * @param device  device address of each piece copy
 * @param host    host address of each piece copy
 * @param lengths bytes of each piece copy (≥ 0)
 */
public record CopyPlan(long[] device, long[] host, int[] lengths) {

    public CopyPlan {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(lengths, "lengths");
        if (device.length != host.length || host.length != lengths.length) {
            throw new IllegalArgumentException("copy plan arrays differ in length: device " + device.length
                    + ", host " + host.length + ", lengths " + lengths.length);
        }
        for (int i = 0; i < lengths.length; i++) {
            if (lengths[i] < 0) {
                throw new IllegalArgumentException("copy plan piece " + i + " has negative length " + lengths[i]);
            }
        }
    }

    /** Number of piece copies. */
    public int pieces() {
        return lengths.length;
    }

    /** Bytes moved by the whole plan. */
    public long totalBytes() {
        long total = 0;
        for (int length : lengths) {
            total += length;
        }
        return total;
    }

    @Override
    public String toString() {
        return "CopyPlan[" + pieces() + " pieces, " + totalBytes() + " bytes]";
    }
}
