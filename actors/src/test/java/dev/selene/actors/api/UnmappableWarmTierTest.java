package dev.selene.actors.api;

import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.SimulatedDevice;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * An embedded node whose warm tier this machine cannot map (the library itself does not check the machine's memory
 * first, as the command line does): its start fails with one line that says what to lower, and nothing is left mapped.
 */
class UnmappableWarmTierTest {

    @Test
    void aWarmTierTheMachineCannotMap_failsTheStartInOneLineSayingWhatToLower() throws IOException {
        // With the kernel's heuristic overcommit (0) or strict accounting (2) a mapping of 4 TiB is refused at once;
        // with "always" (1) it would be granted and then faulted in, which no test should try.
        Path overcommit = Path.of("/proc/sys/vm/overcommit_memory");
        assumeTrue(Files.isReadable(overcommit) && !Files.readString(overcommit).strip().equals("1"),
                "the kernel refuses a mapping larger than its memory");
        Layout layout = Layout.deepseekTp4();
        long warm = 4L << 40;
        CacheConfig config = CacheConfig.memoryOnly(layout, warm).withHostBudgetBytes(warm + (1L << 30));
        try (SimulatedDevice device = SimulatedDevice.create()) {
            EnvironmentException e = assertThrows(EnvironmentException.class, () -> SeleneCache.start(config, device));
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
            assertTrue(e.getMessage().startsWith("host memory of "), e.getMessage());
            assertTrue(e.getMessage().contains("cannot be allocated"), e.getMessage());
            assertTrue(e.getMessage().endsWith("; lower the warm size or the concurrency (selene.warm, "
                    + "selene.concurrency)"), e.getMessage());
        }
    }
}
