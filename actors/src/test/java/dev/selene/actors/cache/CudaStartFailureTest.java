package dev.selene.actors.cache;

import dev.selene.actors.api.SeleneCache;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.CopyMode;
import dev.selene.transport.gpu.FaultInjectingCudaDriver;
import dev.selene.transport.gpu.FaultInjectingCudaDriver.Call;
import dev.selene.transport.gpu.JCudaDeviceCopier;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A node on the JCuda copier whose CUDA driver fails while the node starts: the start fails at once, saying why. */
class CudaStartFailureTest {

    /** A small fraction of the start timeout, which a lost failure would wait out. */
    private static final Duration PROMPTLY = Duration.ofSeconds(30);

    @Test
    void start_withHostRegistrationFaultInjected_failsPromptlyWithTheCudaErrorOnOneLine() {
        FaultInjectingCudaDriver driver = new FaultInjectingCudaDriver();
        Layout layout = Layout.small();
        CacheConfig config = CacheConfig.memoryOnly(layout, 64 * layout.slotBytes()).withConcurrency(1);
        try (JCudaDeviceCopier copier = driver.copier(CopyMode.KERNEL_DIRECT)) {
            driver.failing(Call.REGISTER_HOST, "CUDA_ERROR_OUT_OF_MEMORY");
            assertTrue(PROMPTLY.multipliedBy(10).compareTo(SeleneCache.START_TIMEOUT) <= 0);

            IllegalStateException e = assertTimeoutPreemptively(PROMPTLY,
                    () -> assertThrows(IllegalStateException.class, () -> SeleneCache.start(config, copier)));

            assertTrue(e.getMessage().contains("could not be registered"), e.getMessage());
            assertTrue(e.getMessage().contains("cuMemHostRegister"), e.getMessage());
            assertTrue(e.getMessage().contains("CUDA_ERROR_OUT_OF_MEMORY"), e.getMessage());
            assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        }
    }
}
