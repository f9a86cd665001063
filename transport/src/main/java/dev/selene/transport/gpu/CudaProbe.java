package dev.selene.transport.gpu;

import jcuda.driver.JCudaDriver;

/**
 * Finds out once whether CUDA can be used here: loads JCuda's driver binding, initialises the driver and counts
 * devices, and keeps the answer for the life of the JVM.
 *
 * <p>Without {@code libcuda.so.1} JCuda's first use throws {@link UnsatisfiedLinkError} and every later use
 * {@link NoClassDefFoundError}; both are {@link LinkageError}s, caught here and turned into a cause a person can
 * act on. Probing once also keeps the later, less helpful errors from ever being seen.
 */
public final class CudaProbe {

    private CudaProbe() {
    }

    /** Whether the CUDA driver loaded and sees at least one device. */
    public static boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /** Why CUDA cannot be used here, e.g. "libcuda.so.1 not found (no NVIDIA driver)"; {@code null} when it can. */
    public static String unavailabilityCause() {
        return Result.CAUSE;
    }

    /** Holder so that the probe runs once, on first use, thread-safely. */
    private static final class Result {
        static final String CAUSE = probe();
    }

    private static String probe() {
        return probe(CudaProbe::initAndCount, BoundedCudaCall.INIT_LIMIT);
    }

    /** Loads the driver, initialises it and counts devices. */
    private static int initAndCount() {
        JCudaDriver.setExceptionsEnabled(true);
        JCudaDriver.cuInit(0);
        int[] count = new int[1];
        JCudaDriver.cuDeviceGetCount(count);
        return count[0];
    }

    /**
     * The probe over {@code initAndCount} (the seam where a test stalls it): why CUDA cannot be used, or null. A
     * call that does not return within {@code limit} (a hung driver) makes CUDA unavailable, saying so.
     */
    static String probe(java.util.concurrent.Callable<Integer> initAndCount, java.time.Duration limit) {
        try {
            int count = BoundedCudaCall.call("CUDA driver initialisation (cuInit)", limit, initAndCount);
            return count > 0 ? null : "no CUDA device visible (cuDeviceGetCount returned 0)";
        } catch (BoundedCudaCall.TimedOut e) {
            return e.getMessage();
        } catch (UnsatisfiedLinkError e) {
            String message = String.valueOf(e.getMessage());
            return message.contains("libcuda")
                    ? "libcuda.so.1 not found (no NVIDIA driver)"
                    : "JCuda's native library could not be loaded: " + firstLine(message);
        } catch (LinkageError e) {
            return "JCuda could not be loaded: " + e.getClass().getSimpleName() + ": " + firstLine(e.getMessage());
        } catch (RuntimeException e) {
            return "CUDA driver initialisation failed: " + e.getClass().getSimpleName() + ": "
                    + firstLine(e.getMessage());
        }
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "(no message)";
        }
        String trimmed = message.strip();
        int newline = trimmed.indexOf('\n');
        return newline < 0 ? trimmed : trimmed.substring(0, newline).strip();
    }
}
