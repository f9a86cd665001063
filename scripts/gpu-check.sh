#!/usr/bin/env bash
# The one script for the GPU machine (which has no Java): runs the JCuda tests, the GPU copy benchmark and
# `selene burst --device cuda --json`, writes everything under $OUT, and prints one JSON summary line at the end.
#
# Needs .gpu-runtime/ and .gpu-carry/ from scripts/gpu-prepare.sh, carried in two calls (each under the carry limit):
#   scripts/gpu-check.sh --unpack-runtime     (carry .gpu-runtime) unpacks the Java runtime into .gpu-runtime/jre
#   OUT=/some/dir scripts/gpu-check.sh        (carry .gpu-carry) runs the check with that runtime
# A .gpu-carry/jre.tar.xz, when present, is unpacked and used instead (one call, where the limit allows).
# Needs nothing else from the machine than bash, coreutils, tar with xz (or python3) and the NVIDIA driver.
# Without a CUDA driver (no libcuda.so.1 and no nvidia-smi) it says "no CUDA driver" and exits 2, having run
# nothing; GPU_CHECK_FORCE=1 runs it anyway (the gpu tests then skip with their reason), to test the carry on a CPU
# machine.
#
# Steps (each with its own time limit; a failed step does not stop the others):
#   1. unpack the Java runtime;  2. PTX: with nvcc here, check that scripts/build-ptx.sh rebuilds the shipped PTX
#   (the shipped one is what runs either way);  3. JUnit, dev.selene.transport.gpu: the gpu-tagged tests (real
#   GPU), then the others (emulated driver);  4. GpuCopyBench (gpu-bench.json, gpu-bench.md,
#   gpu-bench-summary.json);  5. selene burst --device cuda --json.
# Output: summary.txt (one line per step) and, last on stdout and in summary.json, one JSON line:
#   {"gpuCheck": "passed" | "failed" | "no CUDA driver", "device", "driver", "cudaDriver", "computeCapability",
#    "tests": {"gpu": {"passed", "failed", "skipped"}, "cpu": {...}}, "bench": {..., "layouts": [{"layout",
#    "mode", "d2hGBps", "h2dGBps", "rawD2hGBps", "rawH2dGBps", "d2hRatio", "h2dRatio"}, ...]}, "burstVerified",
#    "ptx", "out"}
# Exit status: 0 when every step passed, 1 when one failed, 2 without a CUDA driver.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRY="${CARRY:-$ROOT/.gpu-carry}"
RUNTIME="${RUNTIME:-$ROOT/.gpu-runtime}"

unpack() { # archive, into, log
  mkdir -p "$2"
  tar -C "$2" -xJf "$1" 2>"$3" \
    || python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$1" "$2" 2>>"$3"
}
if [ "${1:-}" = --unpack-runtime ]; then
  [ -f "$RUNTIME/jre.tar.xz" ] || { echo "gpu-check: $RUNTIME/jre.tar.xz missing; run scripts/gpu-prepare.sh and carry .gpu-runtime" >&2; exit 1; }
  rm -rf "$RUNTIME/jre"
  unpack "$RUNTIME/jre.tar.xz" "$RUNTIME" "$RUNTIME/unpack.log" \
    || { echo "gpu-check: cannot unpack the runtime (no xz, no python3?); see $RUNTIME/unpack.log" >&2; exit 1; }
  "$RUNTIME/jre/bin/java" -version 2>&1 | head -1 | sed 's/^/gpu-check: runtime ready: /'
  exit "${PIPESTATUS[0]}"
fi
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT" || { echo "gpu-check: cannot create OUT=$OUT" >&2; exit 1; }
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
say() { echo "gpu-check: $*" | tee -a "$SUMMARY"; }

# JSON pieces, built without jq: a string, or null when empty.
json_str() {
  if [ -z "$1" ]; then printf 'null'; return; fi
  printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g')"
}
json_num() { case "$1" in ''|*[!0-9]*) printf 'null' ;; *) printf '%s' "$1" ;; esac; }

DEVICE="" DRIVER="" CUDA_DRIVER="" CC="" PTX_STATE="not checked" BENCH_JSON="null" BURST_VERIFIED="null"
declare -A COUNT=()
summary_line() { # status
  local line
  line="{\"gpuCheck\": $(json_str "$1"), \"device\": $(json_str "$DEVICE"), \"driver\": $(json_str "$DRIVER")"
  line+=", \"cudaDriver\": $(json_str "$CUDA_DRIVER"), \"computeCapability\": $(json_str "$CC"), \"tests\": {"
  local group sep=""
  for group in gpu cpu; do
    line+="$sep\"$group\": {\"passed\": $(json_num "${COUNT[$group.passed]:-}"), \"failed\": $(json_num "${COUNT[$group.failed]:-}"), \"skipped\": $(json_num "${COUNT[$group.skipped]:-}")}"
    sep=", "
  done
  line+="}, \"bench\": $BENCH_JSON, \"burstVerified\": $BURST_VERIFIED, \"ptx\": $(json_str "$PTX_STATE")"
  line+=", \"out\": $(json_str "$OUT")}"
  printf '%s\n' "$line" > "$OUT/summary.json"
  printf '%s\n' "$line"
}

has_libcuda() {
  ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && return 0
  local d
  for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/nvidia/lib64 /usr/local/cuda/compat; do
    [ -e "$d/libcuda.so.1" ] && return 0
  done
  return 1
}
if ! has_libcuda && ! command -v nvidia-smi >/dev/null 2>&1; then
  if [ "${GPU_CHECK_FORCE:-0}" != 1 ]; then
    say "no CUDA driver: libcuda.so.1 not found (ldconfig, /usr/lib*, /usr/local/nvidia/lib64) and no nvidia-smi; nothing run"
    summary_line "no CUDA driver"
    exit 2
  fi
  say "no CUDA driver, but GPU_CHECK_FORCE=1: running anyway (the gpu tests will skip)"
fi
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
  GPU_LINE="$(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null | head -1)"
  [ -z "$GPU_LINE" ] && GPU_LINE="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  IFS=',' read -r DEVICE DRIVER CC <<< "$GPU_LINE"
  DEVICE="$(echo "$DEVICE" | xargs)" DRIVER="$(echo "$DRIVER" | xargs)" CC="$(echo "${CC:-}" | xargs)"
  CUDA_DRIVER="$(sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' "$OUT/nvidia-smi.txt" | head -1)"
  say "GPU: ${DEVICE:-unknown}, driver ${DRIVER:-?}, CUDA ${CUDA_DRIVER:-?}, compute capability ${CC:-?}"
fi
for f in "$CARRY/junit-platform-console-standalone.jar" "$CARRY/test-classes" "$CARRY/lib"; do
  if [ ! -e "$f" ]; then
    say "FAIL: $f missing; run scripts/gpu-prepare.sh and carry .gpu-carry"
    summary_line "failed"
    exit 1
  fi
done
cp "$CARRY/MANIFEST.txt" "$OUT/carry-manifest.txt" 2>/dev/null

# 1. Java runtime: from .gpu-carry/jre.tar.xz when carried there, else the one --unpack-runtime left in .gpu-runtime/jre
WORK="${GPU_CHECK_WORK:-${TMPDIR:-/tmp}/selene-gpu-check}"
rm -rf "$WORK" && mkdir -p "$WORK"
if [ -f "$CARRY/jre.tar.xz" ]; then
  unpack "$CARRY/jre.tar.xz" "$WORK" "$OUT/unpack.log" \
    || { say "FAIL: cannot unpack the runtime (no xz, no python3?); see unpack.log"; summary_line "failed"; exit 1; }
  JRE="$WORK/jre"
elif [ -x "$RUNTIME/jre/bin/java" ]; then
  JRE="$RUNTIME/jre"
else
  say "FAIL: no Java runtime: carry .gpu-runtime and run scripts/gpu-check.sh --unpack-runtime first"
  summary_line "failed"
  exit 1
fi
JAVA="$JRE/bin/java"
if ! "$JAVA" -version > "$OUT/java-version.txt" 2>&1; then
  say "FAIL: the runtime does not start (a noexec file system? set GPU_CHECK_WORK or unpack elsewhere); see java-version.txt"
  summary_line "failed"
  exit 1
fi
say "java: $(head -1 "$OUT/java-version.txt")"
JVM=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Djava.io.tmpdir="$WORK")
LIBCP="$(ls "$CARRY"/lib/*.jar | tr '\n' ':')"
LIBCP="${LIBCP%:}"

# 2. PTX: the jars carry the committed PTX (compute_80, ISA 8.0); a rebuild here only checks that it is current.
NVCC="$(command -v nvcc || true)"
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
SHIPPED="$ROOT/transport/src/main/resources/dev/selene/transport/gpu/gather_scatter.ptx"
if [ -n "$NVCC" ] && [ -f "$SHIPPED" ]; then
  if NVCC="$NVCC" "$ROOT/scripts/build-ptx.sh" "$OUT/gather_scatter.ptx" > "$OUT/nvcc.log" 2>&1; then
    if diff -q <(grep -v '^//' "$OUT/gather_scatter.ptx") <(grep -v '^//' "$SHIPPED") > /dev/null; then
      PTX_STATE="shipped; rebuilt identically with $("$NVCC" --version | tail -1)"
    else
      PTX_STATE="shipped; a rebuild with $("$NVCC" --version | tail -1) differs (gather_scatter.ptx in OUT)"
    fi
  else
    PTX_STATE="shipped; scripts/build-ptx.sh failed here (nvcc.log)"
  fi
else
  PTX_STATE="shipped; no nvcc here to rebuild it"
fi
say "ptx: $PTX_STATE"

STATUS=0
step() { # name, timeout seconds, log file, command...
  local name="$1" limit="$2" log="$3"; shift 3
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then say "PASS $name ($((SECONDS - start)) s)"; else
    STATUS=1; say "FAIL $name: exit $rc after $((SECONDS - start)) s$([ $rc -eq 124 ] && echo " (time limit $limit s)"); see $(basename "$log")"; fi
}
count() { # group, log: reads the console launcher's "[ N tests successful ]" lines
  local kind
  for kind in successful failed skipped aborted; do
    COUNT[$1.$kind]="$(sed -n "s/^\[ *\([0-9][0-9]*\) tests $kind *\].*/\1/p" "$2" | tail -1)"
  done
  COUNT[$1.passed]="${COUNT[$1.successful]}"
  if [ -n "${COUNT[$1.aborted]}" ] && [ -n "${COUNT[$1.failed]}" ]; then
    COUNT[$1.failed]=$(( COUNT[$1.failed] + COUNT[$1.aborted] ))
  fi
  say "  $1 tests: ${COUNT[$1.passed]:-?} passed, ${COUNT[$1.failed]:-?} failed, ${COUNT[$1.skipped]:-?} skipped"
}

# 3. Tests: the real-GPU ones, then the rest of the package (emulated driver)
JUNIT=("$JAVA" "${JVM[@]}" -jar "$CARRY/junit-platform-console-standalone.jar" execute
  --class-path "$CARRY/test-classes:$LIBCP" --select-package dev.selene.transport.gpu
  --details=tree --disable-banner --disable-ansi-colors)
step "gpu tests (gpu-tagged, real device)" "${TEST_TIMEOUT:-300}" "$OUT/tests-gpu.log" \
  "${JUNIT[@]}" --include-tag gpu --reports-dir "$OUT/junit-gpu"
count gpu "$OUT/tests-gpu.log"
SKIP_REASON="$(grep -m1 -o 'gpu test skipped: .*' "$OUT/tests-gpu.log")"
if [ -n "$SKIP_REASON" ]; then
  say "  $SKIP_REASON"
  [ "${GPU_CHECK_FORCE:-0}" = 1 ] || STATUS=1
fi
step "cpu tests (emulated driver)" "${TEST_TIMEOUT:-300}" "$OUT/tests-cpu.log" \
  "${JUNIT[@]}" --exclude-tag gpu --reports-dir "$OUT/junit-cpu"
count cpu "$OUT/tests-cpu.log"

# 4. Benchmark
step "GpuCopyBench" "${BENCH_TIMEOUT:-360}" "$OUT/bench.log" \
  "$JAVA" "${JVM[@]}" -cp "$LIBCP" dev.selene.bench.gpu.GpuCopyBench --out "$OUT" ${BENCH_ARGS:-}
[ -f "$OUT/gpu-bench.md" ] && grep -E "^\| (pipeline|ceiling)" "$OUT/gpu-bench.md" | sed 's/^/  /' | tee -a "$SUMMARY"
if [ -s "$OUT/gpu-bench-summary.json" ]; then
  BENCH_JSON="$(head -1 "$OUT/gpu-bench-summary.json")"
  [ -z "$CUDA_DRIVER" ] && CUDA_DRIVER="$(sed -n 's/.*"cudaDriver": "\([0-9.]*\)".*/\1/p' <<< "$BENCH_JSON")"
  [ -z "$CC" ] && CC="$(sed -n 's/.*"computeCapability": "\([0-9.]*\)".*/\1/p' <<< "$BENCH_JSON")"
  [ -z "$DEVICE" ] && DEVICE="$(sed -n 's/^{"device": "\([^"]*\)".*/\1/p' <<< "$BENCH_JSON")"
else
  grep -m1 "no GPU" "$OUT/bench.log" | sed 's/^/  /' | tee -a "$SUMMARY"
fi

# 5. Burst on the real GPU (--device cuda cannot fall back to the simulated device: selection throws)
step "selene burst --device cuda --json" "${BURST_TIMEOUT:-240}" "$OUT/burst.log" \
  "$JAVA" "${JVM[@]}" -cp "$LIBCP" dev.selene.node.cli.SeleneMain burst --device cuda --json --no-progress \
  ${BURST_ARGS:-}
tail -1 "$OUT/burst.log" > "$OUT/burst.json"
ABANDONED="$(grep -o '"abandoned" *: *{[^}]*}' "$OUT/burst.json" | head -1)"
if grep -q '"verified" *: *true' "$OUT/burst.json"; then
  BURST_VERIFIED=true
  say "burst: verified true; ${ABANDONED:-abandoned: not reported} (goal: {})"
else
  BURST_VERIFIED=false
  STATUS=1
  say "burst: NOT verified: $(grep -m1 '^selene: ' "$OUT/burst.log" || echo 'see burst.json / burst.log') ${ABANDONED:-}"
fi

say "done: $([ $STATUS -eq 0 ] && echo 'all steps passed' || echo 'some steps FAILED'); results in $OUT"
summary_line "$([ $STATUS -eq 0 ] && echo passed || echo failed)"
exit $STATUS
