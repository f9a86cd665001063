// Piece copy kernels for Selene's JCuda device copier (transport/src/main/java/dev/selene/transport/gpu).
//
// A piece table is three arrays of `count` 64-bit entries, in device memory: src[i], dst[i] and len[i] describe
// one piece copy. Both addresses must be reachable from the device: device memory, or host memory registered
// with CU_MEMHOSTREGISTER_DEVICEMAP, addressed through the device pointer cuMemHostGetDevicePointer gave for it.
//
//   gather  - publication: scattered device pieces -> registered host slots (KERNEL_DIRECT)
//                          or -> a contiguous device staging buffer (KERNEL_STAGED)
//   scatter - restore:     registered host slots -> scattered device pieces (KERNEL_DIRECT)
//                          or a contiguous device staging buffer -> scattered device pieces (KERNEL_STAGED)
//
// Both run one thread block per piece (a grid-stride loop when the grid is smaller than the table). A block
// moves its piece in 16-byte vectors, four loads in flight per thread before the stores, so that reads across
// PCIe (scatter from host memory) have enough requests outstanding; an unaligned piece falls back to bytes.
//
// Compiled to PTX by scripts/build-ptx.sh (`nvcc -arch=compute_80 -ptx`, PTX ISA 8.0: any GPU from Ampere on, any
// CUDA 12.0 or newer driver) and loaded with cuModuleLoadData; the PTX is committed as
// transport/src/main/resources/dev/selene/transport/gpu/gather_scatter.ptx. Rerun the script after editing this file.

#include <stdint.h>

#define UNROLL 4

__device__ __forceinline__ void copy_piece(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst,
                                           unsigned long long bytes) {
    const unsigned long long tid = threadIdx.x;
    const unsigned long long threads = blockDim.x;
    unsigned long long done = 0;
    if ((((uintptr_t) src | (uintptr_t) dst) & 15u) == 0) {
        const uint4* s = reinterpret_cast<const uint4*>(src);
        uint4* d = reinterpret_cast<uint4*>(dst);
        const unsigned long long vectors = bytes / 16;
        const unsigned long long step = threads * UNROLL;
        unsigned long long v = tid;
        for (; v + (UNROLL - 1) * threads < vectors; v += step) {
            uint4 r[UNROLL];
#pragma unroll
            for (int k = 0; k < UNROLL; k++) {
                r[k] = s[v + k * threads];
            }
#pragma unroll
            for (int k = 0; k < UNROLL; k++) {
                d[v + k * threads] = r[k];
            }
        }
        for (; v < vectors; v += threads) {
            d[v] = s[v];
        }
        done = vectors * 16;
    }
    for (unsigned long long b = done + tid; b < bytes; b += threads) {
        dst[b] = src[b];
    }
}

__device__ __forceinline__ void copy_table(const unsigned long long* __restrict__ src,
                                           const unsigned long long* __restrict__ dst,
                                           const unsigned long long* __restrict__ len, int count) {
    for (int p = blockIdx.x; p < count; p += gridDim.x) {
        copy_piece(reinterpret_cast<const uint8_t*>(src[p]), reinterpret_cast<uint8_t*>(dst[p]), len[p]);
    }
}

extern "C" __global__ void gather(const unsigned long long* __restrict__ src,
                                  const unsigned long long* __restrict__ dst,
                                  const unsigned long long* __restrict__ len, int count) {
    copy_table(src, dst, len, count);
}

extern "C" __global__ void scatter(const unsigned long long* __restrict__ src,
                                   const unsigned long long* __restrict__ dst,
                                   const unsigned long long* __restrict__ len, int count) {
    copy_table(src, dst, len, count);
}
