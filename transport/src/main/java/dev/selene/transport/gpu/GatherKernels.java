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
 * <p>The PTX is a class-path resource: committed (built with {@code nvcc -arch=sm_90 -ptx}, CUDA 13.0) and rebuilt
 * by the Maven profile {@code cuda-ptx} wherever nvcc is installed, so a build without nvcc still carries it.
 */
final class GatherKernels {

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
