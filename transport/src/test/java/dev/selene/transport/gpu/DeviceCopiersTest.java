package dev.selene.transport.gpu;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

class DeviceCopiersTest {

    @Test
    void auto_withoutAnNvidiaDriver_selectsTheSimulatedDevice_andTheProbeSaysWhy() {
        assumeFalse(CudaProbe.isAvailable(), "CUDA is available on this machine");
        String cause = CudaProbe.unavailabilityCause();
        assertNotNull(cause);
        assertFalse(cause.isBlank());

        try (DeviceCopier copier = DeviceCopiers.select("auto")) {
            assertInstanceOf(SimulatedDevice.class, copier);
        }
    }

    @Test
    void cuda_withoutAnNvidiaDriver_throwsWithTheProbesCause() {
        assumeFalse(CudaProbe.isAvailable(), "CUDA is available on this machine");

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> DeviceCopiers.select("cuda"));

        assertTrue(e.getMessage().contains(CudaProbe.unavailabilityCause()), e.getMessage());
    }

    @Test
    void probe_givesTheSameAnswerEveryTime() {
        assertTrue(java.util.Objects.equals(CudaProbe.unavailabilityCause(), CudaProbe.unavailabilityCause()));
        assertTrue(CudaProbe.isAvailable() == (CudaProbe.unavailabilityCause() == null));
    }

    @Test
    void simulated_selectsTheSimulatedDeviceWhateverTheMachine() {
        try (DeviceCopier copier = DeviceCopiers.select(" Simulated ")) {
            assertInstanceOf(SimulatedDevice.class, copier);
        }
    }

    @Test
    void unknownKind_throwsNamingTheAllowedKinds() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DeviceCopiers.select("gpu"));

        assertTrue(e.getMessage().contains("auto, simulated, cuda"), e.getMessage());
    }
}
