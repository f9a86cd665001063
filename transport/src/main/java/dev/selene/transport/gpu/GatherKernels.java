package dev.selene.transport.gpu;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The PTX of {@code transport/src/main/cuda/gather_scatter.cu}: the {@code gather} and {@code scatter} kernels, each
 * taking {@code (const u64* src, const u64* dst, const u64* len, int count)} and run one block per piece.
 *
 * <p>The PTX is a committed class-path resource, built by {@code scripts/build-ptx.sh}: {@code nvcc -arch=compute_80
 * -ptx} with the ISA line lowered to {@value #MAX_PTX_ISA}, so that one file serves every GPU of compute capability
 * 8.0 or newer (the driver JIT-compiles it for the GPU it finds) under every CUDA 12.0 or newer driver. Every build
 * ships the same PTX, whatever nvcc the build machine has.
 */
final class GatherKernels {

    /** Oldest compute capability the PTX runs on (major × 10 + minor): 8.0, Ampere. */
    static final int MIN_COMPUTE_CAPABILITY = 80;
    /** Newest PTX ISA the PTX may declare: that of CUDA 12.0, the oldest driver it is meant for. */
    static final String MAX_PTX_ISA = "8.0";

    /** Class-path location of the PTX. */
    static final String RESOURCE = "/dev/selene/transport/gpu/gather_scatter.ptx";
    /** Threads per block: 256 threads × 16-byte vectors × 4 loads in flight = 16 KiB per block per step. */
    static final int BLOCK_THREADS = 256;
    /** Most blocks per launch; larger tables are covered by the kernels' grid-stride loop. */
    static final int MAX_GRID_BLOCKS = 1 << 20;

    private GatherKernels() {
    }

    /** The PTX text. */
    static String ptx() {
        try (InputStream in = GatherKernels.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("PTX resource " + RESOURCE + " is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException("reading PTX resource " + RESOURCE, e);
        }
    }

    /** The PTX as cuModuleLoadData wants it: bytes with a terminating NUL. */
    static byte[] ptxImage() {
        byte[] text = ptx().getBytes(StandardCharsets.US_ASCII);
        return Arrays.copyOf(text, text.length + 1);
    }

    /** Blocks to launch for {@code pieces} pieces: one per piece, capped. */
    static int gridBlocks(int pieces) {
        return Math.max(1, Math.min(pieces, MAX_GRID_BLOCKS));
    }
}
