#!/usr/bin/env bash
# The one script for the GPU machine (which has no Java): runs the gpu-tagged tests, the GPU copy benchmark and
# `selene burst --device cuda --json`, and writes everything under $OUT.
#
# Needs .gpu-carry/ from scripts/gpu-prepare.sh (carried with the working tree). Run from the repository root:
#   OUT=/some/dir scripts/gpu-check.sh
# Without a GPU (no nvidia-smi and no libcuda.so.1) it says so on one line and exits 0, having run nothing;
# GPU_CHECK_FORCE=1 runs it anyway (the gpu tests then skip with their reason), to test the carry on a CPU machine.
#
# Steps (each with its own time limit; a failed step does not stop the others):
#   1. unpack the Java runtime;  2. rebuild the PTX with nvcc when present (it then goes first on the class path);
#   3. JUnit: every test of dev.selene.transport.gpu (contract on JCuda in all modes, emulated, simulated);
#   4. GpuCopyBench (gpu-bench.json, gpu-bench.md);  5. selene burst --device cuda --json.
# Exit status: 0 when every step passed (or there is no GPU), 1 otherwise; summary.txt says which.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRY="${CARRY:-$ROOT/.gpu-carry}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
say() { echo "gpu-check: $*" | tee -a "$SUMMARY"; }

has_libcuda() {
  ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && return 0
  local d
  for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/nvidia/lib64 /usr/local/cuda/compat; do
    [ -e "$d/libcuda.so.1" ] && return 0
  done
  return 1
}
if ! command -v nvidia-smi >/dev/null 2>&1 && ! has_libcuda; then
  if [ "${GPU_CHECK_FORCE:-0}" != 1 ]; then
    say "no GPU: neither nvidia-smi nor libcuda.so.1 found; nothing run (GPU path untested here)"
    exit 0
  fi
  say "no GPU, but GPU_CHECK_FORCE=1: running anyway (gpu tests will skip)"
fi
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
  say "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
fi
[ -f "$CARRY/jre.tar.xz" ] || { say "FAIL: $CARRY/jre.tar.xz missing; run scripts/gpu-prepare.sh and carry .gpu-carry"; exit 1; }
cp "$CARRY/MANIFEST.txt" "$OUT/carry-manifest.txt" 2>/dev/null

# 1. Java runtime
WORK="${TMPDIR:-/tmp}/selene-gpu-check"
rm -rf "$WORK" && mkdir -p "$WORK"
if ! tar -C "$WORK" -xJf "$CARRY/jre.tar.xz" 2>"$OUT/unpack.log"; then
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$CARRY/jre.tar.xz" "$WORK" \
    2>>"$OUT/unpack.log" || { say "FAIL: cannot unpack the runtime (no xz, no python3?); see unpack.log"; exit 1; }
fi
JAVA="$WORK/jre/bin/java"
"$JAVA" -version > "$OUT/java-version.txt" 2>&1 || { say "FAIL: the runtime does not start; see java-version.txt"; exit 1; }
say "java: $(head -1 "$OUT/java-version.txt")"
JVM=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Djava.io.tmpdir="$WORK")
LIBCP="$(ls "$CARRY"/lib/*.jar | tr '\n' ':')"
LIBCP="${LIBCP%:}"

# 2. PTX from this machine's nvcc, when there is one
PTXCP=""
NVCC="$(command -v nvcc || true)"
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ -n "$NVCC" ]; then
  mkdir -p "$WORK/ptx/dev/selene/transport/gpu"
  if "$NVCC" -arch=sm_90 -ptx "$ROOT/transport/src/main/cuda/gather_scatter.cu" \
       -o "$WORK/ptx/dev/selene/transport/gpu/gather_scatter.ptx" > "$OUT/nvcc.log" 2>&1; then
    cp "$WORK/ptx/dev/selene/transport/gpu/gather_scatter.ptx" "$OUT/gather_scatter.ptx"
    PTXCP="$WORK/ptx:"
    if cmp -s "$OUT/gather_scatter.ptx" "$ROOT/transport/src/main/resources/dev/selene/transport/gpu/gather_scatter.ptx"; then
      say "ptx: rebuilt with $("$NVCC" --version | tail -1); identical to the committed PTX"
    else
      say "ptx: rebuilt with $("$NVCC" --version | tail -1); DIFFERS from the committed PTX (using the rebuilt one)"
    fi
  else
    say "ptx: nvcc failed (see nvcc.log); using the committed PTX"
  fi
else
  say "ptx: no nvcc here; using the committed PTX"
fi

STATUS=0
step() { # name, timeout seconds, log file, command...
  local name="$1" limit="$2" log="$3"; shift 3
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then say "PASS $name ($((SECONDS - start)) s)"; else
    STATUS=1; say "FAIL $name: exit $rc after $((SECONDS - start)) s$([ $rc -eq 124 ] && echo " (time limit $limit s)"); see $(basename "$log")"; fi
}

# 3. Tests
step "tests (dev.selene.transport.gpu, gpu-tagged included)" "${TEST_TIMEOUT:-300}" "$OUT/tests.log" \
  "$JAVA" "${JVM[@]}" -jar "$CARRY/junit-platform-console-standalone.jar" execute \
  --class-path "$PTXCP$CARRY/test-classes:$LIBCP" --select-package dev.selene.transport.gpu \
  --reports-dir "$OUT/junit" --details=tree --disable-banner --disable-ansi-colors
grep -E "tests (successful|failed|skipped|aborted)" "$OUT/tests.log" | sed 's/^/  /' | tee -a "$SUMMARY"
grep -c "gpu test skipped" "$OUT/tests.log" | sed 's/^/  gpu tests skipped for lack of CUDA: /' | tee -a "$SUMMARY"

# 4. Benchmark
step "GpuCopyBench" "${BENCH_TIMEOUT:-360}" "$OUT/bench.log" \
  "$JAVA" "${JVM[@]}" -cp "$PTXCP$LIBCP" dev.selene.bench.gpu.GpuCopyBench --out "$OUT" ${BENCH_ARGS:-}
[ -f "$OUT/gpu-bench.md" ] && grep -E "^\| (pipeline|ceiling)" "$OUT/gpu-bench.md" | sed 's/^/  /' | tee -a "$SUMMARY"

# 5. Burst on the real GPU
step "selene burst --device cuda --json" "${BURST_TIMEOUT:-240}" "$OUT/burst.log" \
  "$JAVA" "${JVM[@]}" -cp "$PTXCP$LIBCP" dev.selene.node.cli.SeleneMain burst --device cuda --json --no-progress \
  ${BURST_ARGS:-}
tail -1 "$OUT/burst.log" > "$OUT/burst.json"
# --device cuda cannot fall back to the simulated device: selection throws when CUDA is unusable.
ABANDONED="$(grep -o '"abandoned" *: *{[^}]*}' "$OUT/burst.json" | head -1)"
if grep -q '"verified" *: *true' "$OUT/burst.json"; then
  say "burst: verified true; ${ABANDONED:-abandoned: not reported} (goal: {})"
else
  STATUS=1
  say "burst: NOT verified (see burst.json / burst.log); ${ABANDONED:-}"
fi

say "done: $([ $STATUS -eq 0 ] && echo 'all steps passed' || echo 'some steps FAILED'); results in $OUT"
exit $STATUS
