package dev.selene.transport.gpu;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs a CUDA call that can hang (driver initialisation on a wedged GPU, a module load that JIT-compiles PTX) on a
 * thread of its own and waits for it at most a time limit. A call that does not return in time is left running (a
 * driver call cannot be interrupted; the thread is a daemon) and the caller gets one line saying which call hung.
 */
final class BoundedCudaCall {

    /** Limit of {@code cuInit} and the device count, in the probe and when the copier opens the device. */
    static final Duration INIT_LIMIT = Duration.ofSeconds(60);
    /** Limit of loading the copy kernels ({@code cuModuleLoadData}: the driver may JIT-compile the PTX). */
    static final Duration MODULE_LOAD_LIMIT = Duration.ofSeconds(120);

    private BoundedCudaCall() {
    }

    /** Thrown when a bounded call did not return within its limit. */
    static final class TimedOut extends IllegalStateException {
        TimedOut(String message) {
            super(message);
        }
    }

    /**
     * {@code call}'s result, or its exception as it threw it (an unchecked one as is, a checked one wrapped);
     * {@link TimedOut} naming {@code what} when it has not returned within {@code limit}.
     */
    static <T> T call(String what, Duration limit, Callable<T> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("cuda-bounded-call").start(() -> {
            try {
                result.complete(call.call());
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        try {
            return result.get(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new TimedOut(what + " did not return within " + limit.toSeconds() + " s: the GPU or its driver may "
                    + "be hung (nvidia-smi shows the device's state); nothing that needs CUDA was started");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + what, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(what + " failed: " + cause, cause);
        }
    }
}
