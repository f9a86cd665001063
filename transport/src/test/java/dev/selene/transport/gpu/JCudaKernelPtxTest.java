package dev.selene.transport.gpu;

import org.junit.jupiter.api.Test;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What can be checked of the GPU side without a GPU: the PTX resource and the pointer conversions. */
class JCudaKernelPtxTest {

    @Test
    void ptxResource_declaresGatherAndScatter_withThreeTablePointersAndACount_forSm90() {
        String ptx = GatherKernels.ptx();

        assertTrue(ptx.contains(".target sm_90"), "built for sm_90");
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
