#!/usr/bin/env bash
# Rebuilds the gather/scatter PTX that the JCuda copier loads, for every GPU from Ampere on and every CUDA 12+ driver.
#
#   scripts/build-ptx.sh            rewrites transport/src/main/resources/dev/selene/transport/gpu/gather_scatter.ptx
#   scripts/build-ptx.sh OUT.ptx    writes OUT.ptx instead (e.g. to compare with the committed one)
#   NVCC=/path/to/nvcc scripts/build-ptx.sh
#
# What it produces:
#   .target sm_80   nvcc -arch=compute_80 -ptx: virtual architecture 8.0, which the driver JIT-compiles for the
#                   GPU it runs on (Ampere sm_80/86, Ada sm_89, Hopper sm_90, Blackwell sm_100/120, ...).
#   .version 8.0    the PTX ISA of CUDA 12.0, the oldest ISA that a CUDA 12.0 driver accepts. nvcc writes the ISA of
#                   its own release (9.0 for CUDA 13, which a CUDA 12 driver rejects); the kernels use nothing newer
#                   than ISA 7.0, so the line is lowered, and ptxas then assembles the result for sm_80 and sm_90 to
#                   prove it: ptxas refuses any instruction that the declared ISA does not have.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/transport/src/main/cuda/gather_scatter.cu"
OUT="${1:-$ROOT/transport/src/main/resources/dev/selene/transport/gpu/gather_scatter.ptx}"
ARCH=compute_80
PTX_ISA=8.0

NVCC="${NVCC:-$(command -v nvcc || true)}"
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
[ -n "$NVCC" ] || { echo "build-ptx: no nvcc (set NVCC=/path/to/nvcc)" >&2; exit 2; }
PTXAS="$(dirname "$NVCC")/ptxas"
[ -x "$PTXAS" ] || PTXAS="$(command -v ptxas || true)"
[ -n "$PTXAS" ] || { echo "build-ptx: no ptxas next to $NVCC" >&2; exit 2; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$NVCC" -arch="$ARCH" -ptx "$SRC" -o "$WORK/raw.ptx"
grep -q '^\.target sm_80$' "$WORK/raw.ptx" || { echo "build-ptx: nvcc did not write .target sm_80" >&2; exit 1; }
sed -E "s/^\.version [0-9]+\.[0-9]+$/.version $PTX_ISA/" "$WORK/raw.ptx" > "$WORK/out.ptx"
for sm in sm_80 sm_90; do
  "$PTXAS" -arch="$sm" "$WORK/out.ptx" -o "$WORK/$sm.cubin" \
    || { echo "build-ptx: ptxas rejects the PTX as ISA $PTX_ISA for $sm; raise PTX_ISA (and the driver floor)" >&2; exit 1; }
done
mkdir -p "$(dirname "$OUT")"
cp "$WORK/out.ptx" "$OUT"
echo "build-ptx: $OUT (.version $PTX_ISA, .target sm_80) with $("$NVCC" --version | tail -1)"
