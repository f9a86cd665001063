package dev.selene.transport.gpu;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The time limit on CUDA calls that can hang: the probe's driver initialisation and loading the copy kernels. */
class BoundedCudaCallTest {

    private final CountDownLatch never = new CountDownLatch(1);

    /** A stand-in for a driver call that hangs: it waits for a latch nobody counts down. */
    private int stalls() throws InterruptedException {
        never.await();
        return 1;
    }

    @Test
    void probe_whenCuInitHangs_stallInjected_givesUpAtTheLimit_andCudaIsUnavailableSayingWhy() {
        String cause = assertTimeoutPreemptively(Duration.ofSeconds(20),
                () -> CudaProbe.probe(this::stalls, Duration.ofMillis(300)));
        assertTrue(cause != null && cause.startsWith("CUDA driver initialisation (cuInit) did not return within"),
                cause);
        assertFalse(cause.contains("\n"), "one line: " + cause);
    }

    @Test
    void probe_passesTheDeviceCount_andItsFailures_through() {
        assertNull(CudaProbe.probe(() -> 1, Duration.ofSeconds(10)));
        assertEquals("no CUDA device visible (cuDeviceGetCount returned 0)",
                CudaProbe.probe(() -> 0, Duration.ofSeconds(10)));
        String cause = CudaProbe.probe(() -> {
            throw new IllegalStateException("CUDA_ERROR_NO_DEVICE");
        }, Duration.ofSeconds(10));
        assertEquals("CUDA driver initialisation failed: IllegalStateException: CUDA_ERROR_NO_DEVICE", cause);
    }

    @Test
    void aCallThatHangs_stallInjected_failsAtTheLimitNamingTheCall() {
        BoundedCudaCall.TimedOut e = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(
                BoundedCudaCall.TimedOut.class,
                () -> BoundedCudaCall.call("loading the copy kernels (cuModuleLoadData)", Duration.ofMillis(300),
                        this::stalls)));
        assertTrue(e.getMessage().startsWith("loading the copy kernels (cuModuleLoadData) did not return within"),
                e.getMessage());
    }

    @Test
    void aCallThatReturnsOrThrowsInTime_isPassedThroughAsItIs() {
        assertEquals("ok", BoundedCudaCall.call("x", Duration.ofSeconds(10), () -> "ok"));
        IllegalStateException thrown = new IllegalStateException("cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX");
        assertEquals(thrown, assertThrows(IllegalStateException.class,
                () -> BoundedCudaCall.call("x", Duration.ofSeconds(10), () -> {
                    throw thrown;
                })));
    }
}
