package dev.selene.transport.gpu;

import java.util.Locale;

/**
 * How the JCuda copier moves a plan's pieces between device memory and the registered host mapping.
 *
 * <p>One copy-engine call per piece is slow for small pieces, while a kernel that copies every piece of a batch
 * reaches the link's speed at any piece size (the figures are in {@code docs/benchmarks.md}, "Figures behind
 * constants in the code"). {@link #KERNEL_DIRECT} is the default.
 */
public enum CopyMode {
    /** One {@code cuMemcpy*Async} per piece on the direction's stream: the baseline. */
    PER_PIECE,
    /**
     * A kernel, one thread block per piece, copies straight between device pieces and the host slots through
     * the device pointer of the registered (DEVICEMAP) host mapping.
     */
    KERNEL_DIRECT,
    /**
     * A kernel gathers the pieces into a contiguous device staging buffer (or scatters them out of it), and the
     * copy engine moves the staging buffer in one transfer per contiguous run of host slots. Leaves the SMs
     * nearly idle: the device-side copy runs at HBM speed.
     */
    KERNEL_STAGED;

    /** System property that selects the mode of copiers made by {@link DeviceCopiers}. */
    public static final String PROPERTY = "selene.gpu.copy-mode";

    /** The mode named {@code name} (case and {@code -}/{@code _} insensitive); an exception naming the allowed values. */
    public static CopyMode parse(String name) {
        String normalised = name.strip().toUpperCase(Locale.ROOT).replace('-', '_');
        for (CopyMode mode : values()) {
            if (mode.name().equals(normalised)) {
                return mode;
            }
        }
        throw new IllegalArgumentException("copy mode '" + name + "' is unknown; allowed: per-piece, kernel-direct, "
                + "kernel-staged");
    }

    /** The mode the system property {@value #PROPERTY} names, or {@link #KERNEL_DIRECT} when it is unset. */
    public static CopyMode fromSystemProperty() {
        String value = System.getProperty(PROPERTY);
        return value == null || value.isBlank() ? KERNEL_DIRECT : parse(value);
    }

    /** The mode's name as written in settings and reports, e.g. {@code kernel-direct}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
