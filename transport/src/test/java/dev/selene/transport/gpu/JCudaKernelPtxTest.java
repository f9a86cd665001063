package dev.selene.transport.gpu;

import org.junit.jupiter.api.Test;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What can be checked of the GPU side without a GPU: the PTX resource and the pointer conversions. */
class JCudaKernelPtxTest {

    @Test
    void ptxResource_targetsSm80OrLower_withAnIsaThatACuda12DriverAccepts() {
        String ptx = GatherKernels.ptx();

        Matcher target = Pattern.compile("(?m)^\\.target sm_(\\d+)$").matcher(ptx);
        assertTrue(target.find(), "a .target line");
        int sm = Integer.parseInt(target.group(1));
        assertTrue(sm <= GatherKernels.MIN_COMPUTE_CAPABILITY, ".target sm_" + sm + " would not JIT on Ampere (sm_80)");
        Matcher version = Pattern.compile("(?m)^\\.version (\\d+)\\.(\\d+)$").matcher(ptx);
        assertTrue(version.find(), "a .version line");
        int isa = Integer.parseInt(version.group(1)) * 10 + Integer.parseInt(version.group(2));
        assertTrue(isa <= 80, "PTX ISA " + version.group(1) + "." + version.group(2) + " is newer than "
                + GatherKernels.MAX_PTX_ISA + " (CUDA 12.0); a CUDA 12.0 driver rejects it");
        assertTrue(ptx.contains("\n.address_size 64\n"), "64-bit addresses");
    }

    @Test
    void ptxResource_declaresGatherAndScatter_withThreeTablePointersAndACount() {
        String ptx = GatherKernels.ptx();

        for (CudaDriver.Kernel kernel : CudaDriver.Kernel.values()) {
            Matcher entry = Pattern.compile("\\.visible \\.entry " + kernel.entry() + "\\(([^)]*)\\)").matcher(ptx);
            assertTrue(entry.find(), "entry " + kernel.entry());
            String parameters = entry.group(1);
            assertEquals(3, count(parameters, "\\.param \\.u64"), parameters);
            assertEquals(1, count(parameters, "\\.param \\.u32"), parameters);
        }
        byte[] image = GatherKernels.ptxImage();
        assertEquals(0, image[image.length - 1], "NUL-terminated for cuModuleLoadData");
    }

    @Test
    void gridBlocks_isOnePerPiece_cappedAndNeverZero() {
        assertEquals(1, GatherKernels.gridBlocks(0));
        assertEquals(124, GatherKernels.gridBlocks(124));
        assertEquals(GatherKernels.MAX_GRID_BLOCKS, GatherKernels.gridBlocks(Integer.MAX_VALUE));
    }

    @Test
    void cudaPointers_carryTheAddressInTheNativePointer() {
        long address = 0x7F12_3456_7000L;

        assertEquals(address, CudaPointers.address(CudaPointers.device(address)));
        assertEquals(address, CudaPointers.address(CudaPointers.host(address)));
        assertEquals(address + 64, CudaPointers.address(CudaPointers.device(address).withByteOffset(64)));
    }

    private static int count(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
