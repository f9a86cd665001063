package dev.selene.transport.gpu;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The device copier contract on a real GPU, in the default mode; skipped with the probe's reason without one. */
@Tag("gpu")
@ExtendWith(JCudaDeviceCopierTest.RequiresCuda.class)
class JCudaDeviceCopierTest extends DeviceCopierContract {

    /**
     * Skips each test, with {@link CudaProbe}'s reason, where CUDA is unavailable. A condition rather than an
     * assumption: it skips before the contract's {@code @BeforeEach} opens a copier, and reports every test as
     * skipped with the reason (a failed {@code @BeforeAll} assumption would hide the tests from the report).
     */
    static final class RequiresCuda implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            if (CudaProbe.isAvailable()) {
                return ConditionEvaluationResult.enabled("CUDA is available");
            }
            String reason = "gpu test skipped: " + CudaProbe.unavailabilityCause();
            return context.getTestMethod().isPresent() ? ConditionEvaluationResult.disabled(reason)
                    : ConditionEvaluationResult.enabled(reason);
        }
    }

    @Override
    protected DeviceCopier createCopier() {
        return JCudaDeviceCopier.create(CopyMode.KERNEL_DIRECT, 0);
    }

    @Test
    void copier_isNamedCuda_isAvailable_andDescribesItsDevice() {
        JCudaDeviceCopier cuda = (JCudaDeviceCopier) copier;

        assertEquals("cuda", cuda.name());
        assertTrue(cuda.isAvailable());
        assertNull(cuda.unavailabilityCause());
        assertTrue(cuda.device().contains("device 0"), cuda.device());
    }

    @Test
    void selection_cudaAndAuto_giveTheJCudaCopierOnAGpuMachine() {
        try (DeviceCopier cuda = DeviceCopiers.select("cuda"); DeviceCopier auto = DeviceCopiers.select("auto")) {
            assertInstanceOf(JCudaDeviceCopier.class, cuda);
            assertInstanceOf(JCudaDeviceCopier.class, auto);
        }
    }
}
