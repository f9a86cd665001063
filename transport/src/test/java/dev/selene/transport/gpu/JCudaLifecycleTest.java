package dev.selene.transport.gpu;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.FaultInjectingCudaDriver.Call;
import dev.selene.transport.host.HostMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JCuda copier's life on a driver that fails or counts its calls: a start that fails says why at once and
 * leaves nothing allocated, host memory is unregistered before it is unmapped, and copies after the first allocate
 * and register nothing.
 */
class JCudaLifecycleTest {

    /** Far below the node's start timeout (minutes): a failure must arrive within this. */
    private static final Duration PROMPTLY = Duration.ofSeconds(10);
    private static final Layout LAYOUT = Layout.deepseekTp4();

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
    }

    @Test
    void start_withHostRegistrationFaultInjected_failsPromptlyNamingTheCudaError_andLeavesNothingBehind() {
        // The first stream's four piece tables register, the second stream's second table does not.
        FaultInjectingCudaDriver driver = new FaultInjectingCudaDriver()
                .failingAfter(Call.REGISTER_HOST, 5, "CUDA_ERROR_OUT_OF_MEMORY");

        IllegalStateException e = assertTimeoutPreemptively(PROMPTLY,
                () -> assertThrows(IllegalStateException.class, () -> driver.copier(CopyMode.KERNEL_DIRECT)));

        assertTrue(e.getMessage().contains("cuMemHostRegister") && e.getMessage().contains("CUDA_ERROR_OUT_OF_MEMORY"),
                e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        assertEquals(6, driver.calls(Call.REGISTER_HOST));
        assertEquals(0, driver.liveRegistrations(), "the tables registered before the fault are unregistered");
        assertEquals(0, driver.liveAllocations(), "their device copies are freed");
        assertTrue(driver.isClosed(), "the driver (context) is released");
    }

    @Test
    void register_withHostRegistrationFaultInjected_throwsPromptlyNamingTheCudaError() {
        FaultInjectingCudaDriver driver = new FaultInjectingCudaDriver();
        JCudaDeviceCopier copier = open(driver.copier(CopyMode.KERNEL_DIRECT));
        HostMemory host = host(4);
        driver.failing(Call.REGISTER_HOST, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED");

        IllegalStateException e = assertTimeoutPreemptively(PROMPTLY,
                () -> assertThrows(IllegalStateException.class, () -> copier.register(host)));

        assertTrue(e.getMessage().contains("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"), e.getMessage());
        CopyPlan plan = new CopyPlan(new long[] {copier.allocateDevice(4096)}, new long[] {host.address(0, 0)},
                new int[] {4096});
        ExecutionException copy = assertThrows(ExecutionException.class,
                () -> copier.copyToHost(plan).get(30, TimeUnit.SECONDS));
        assertTrue(copy.getCause().getMessage().contains("none registered"), copy.getCause().getMessage());
    }

    @Test
    void closingTheMapping_unregistersItWhileStillMapped_andTheCopierNeverAgain() {
        FaultInjectingCudaDriver driver = new FaultInjectingCudaDriver();
        JCudaDeviceCopier copier = open(driver.copier(CopyMode.KERNEL_DIRECT));
        HostMemory host = HostMemory.allocate(LAYOUT, 4);
        HostMemory next = host(4); // mapped now, so that it cannot take over the first mapping's addresses
        driver.watch(host);
        copier.register(host);

        host.close();
        assertEquals(List.of("mapped"), driver.unregistrations());

        copier.register(next);
        copier.close();
        assertEquals(List.of("mapped"), driver.unregistrations(), "unregistered once, before the unmapping");
    }

    @Test
    void closingTheCopierFirst_unregistersTheMappingWhileStillMapped_andClosingTheMappingDoesNotAgain() {
        FaultInjectingCudaDriver driver = new FaultInjectingCudaDriver();
        JCudaDeviceCopier copier = driver.copier(CopyMode.KERNEL_STAGED);
        HostMemory host = HostMemory.allocate(LAYOUT, 4);
        driver.watch(host);
        copier.register(host);

        copier.close();
        host.close();

        assertEquals(List.of("mapped"), driver.unregistrations());
        assertEquals(0, driver.liveRegistrations());
    }

    @Test
    void closingTheMapping_whenUnregistrationFailsFaultInjected_stillUnmapsIt_andPlansIntoItFailSayingClosed() {
        FaultInjectingCudaDriver driver = new FaultInjectingCudaDriver();
        JCudaDeviceCopier copier = open(driver.copier(CopyMode.KERNEL_DIRECT));
        HostMemory host = HostMemory.allocate(LAYOUT, 4);
        long address = host.address(1, 0);
        copier.register(host);
        driver.failing(Call.UNREGISTER_HOST, "CUDA_ERROR_INVALID_VALUE");

        host.close();

        assertFalse(host.isOpen());
        long device = copier.allocateDevice(4096);
        ExecutionException e = assertThrows(ExecutionException.class, () -> copier.copyToHost(
                new CopyPlan(new long[] {device}, new long[] {address}, new int[] {4096})).get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("closed"), e.getCause().getMessage());
    }

    @ParameterizedTest
    @EnumSource(CopyMode.class)
    void copiesAfterTheFirst_allocateFreeAndRegisterNothing(CopyMode mode) throws Exception {
        FaultInjectingCudaDriver driver = new FaultInjectingCudaDriver();
        JCudaDeviceCopier copier = open(driver.copier(mode));
        int pieces = LAYOUT.slotsPerRecord(true);
        HostMemory host = host(pieces);
        copier.register(host);
        DevicePlacement source = placement(copier);
        DevicePlacement target = placement(copier);
        KeyedContent.fillRecord(copier, LAYOUT, source, new RecordKey("hot", 1), true);
        SlotList slots = SlotList.of(IntStream.range(0, pieces).toArray());
        CopyPlan toHost = CopyPlans.forRecord(LAYOUT, host, slots, source, true);
        CopyPlan toDevice = CopyPlans.forRecord(LAYOUT, host, slots, target, true);
        copier.copyToHost(toHost).get(30, TimeUnit.SECONDS);
        copier.copyToDevice(toDevice).get(30, TimeUnit.SECONDS);
        Map<Call, Integer> afterFirst = counts(driver);

        for (int i = 0; i < 50; i++) {
            copier.copyToHost(toHost).get(30, TimeUnit.SECONDS);
            copier.copyToDevice(toDevice).get(30, TimeUnit.SECONDS);
        }

        assertEquals(afterFirst, counts(driver), "driver allocations and registrations during 100 copies");
        assertTrue(KeyedContent.verifyRecord(copier, LAYOUT, target, new RecordKey("hot", 1), true));
    }

    private static Map<Call, Integer> counts(FaultInjectingCudaDriver driver) {
        return Map.of(Call.ALLOCATE, driver.calls(Call.ALLOCATE), Call.FREE, driver.calls(Call.FREE),
                Call.REGISTER_HOST, driver.calls(Call.REGISTER_HOST),
                Call.UNREGISTER_HOST, driver.calls(Call.UNREGISTER_HOST));
    }

    private DevicePlacement placement(JCudaDeviceCopier copier) {
        return DevicePlacement.contiguous(LAYOUT, copier.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, true)),
                true);
    }

    private JCudaDeviceCopier open(JCudaDeviceCopier copier) {
        toClose.add(copier);
        return copier;
    }

    private HostMemory host(int slots) {
        HostMemory host = HostMemory.allocate(LAYOUT, slots);
        toClose.add(host);
        return host;
    }
}
