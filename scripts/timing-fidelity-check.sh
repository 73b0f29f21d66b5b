#!/usr/bin/env bash
# Issue 31 on the GPU machine: is kforge's timing right at every size? One part per device call (each
# finishes well inside 9 minutes); results under $OUT.
#   fidelity     (default, about 7 min) bench/timing_fidelity: 5 kernel shapes x 6 sizes (3 µs to ~100 ms) in
#                PyTorch-reference mode and kernel mode, each against itself, as one kforge batch; a clean
#                standalone measurement and triton.testing.do_bench of every call in a fresh process per
#                shape; three fresh batches of three points (first run = repeat). Writes
#                timing_fidelity.md (the table, pass/fail per point against the issue's bounds),
#                timing_fidelity.json, timing-fidelity.log and timing-fidelity-work.tar.gz.
#                FIDELITY_MODES=pytorch|kernel runs one mode's 30 points (two calls fit the 10-minute limit
#                where one does not), FIDELITY_PHASES picks phases, FIDELITY_BESIDE=1 adds --reference-beside.
#   tritonbench  (about 5 min) the 20 kernel-mode suite files as their own TritonBench answers
#                (scripts/tritonbench-check.sh suite, no ncu efficiency): every self-speedup should be 1.00;
#                ITEMS=a,b,... limits the items. Writes tritonbench.log and tritonbench.tar.gz.
#   throughput   (about 6 min) bench/throughput's kforge batch and stability phases (TIME_BUDGET=1, as
#                recorded in docs/benchmarks.md); writes throughput.md/.json, bench-throughput.log, and
#                throughput-details.tar.gz.
# Usage: OUT=/some/dir scripts/timing-fidelity-check.sh [fidelity|tritonbench|throughput ...]
# Environment: KFORGE_BIN (default build/release/kforge), KFORGE_PYTHON (default python3);
# KFORGE_TIMING_FLUSH=write times with the write flush of KernelBench and do_bench instead of kforge's
# read flush (both sides and the standalone harness), for an A/B against the default.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/kforge-timing-fidelity}
mkdir -p "$OUT"
KFORGE=${KFORGE_BIN:-build/release/kforge}
PYTHON=${KFORGE_PYTHON:-python3}
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(fidelity)

{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 || true
  "$PYTHON" -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.version.cuda)"
  "$KFORGE" --version
  git log -1 --format='commit %H %s' 2>/dev/null || true
  nproc | sed 's/^/cpu cores /'
  echo "l2 flush ${KFORGE_TIMING_FLUSH:-read}"
} >"$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

for part in "${parts[@]}"; do
  start=$(date +%s)
  case "$part" in
    fidelity)
      work=$(mktemp -d /tmp/kforge-fidelity-work.XXXXXX)
      timeout 540 "$PYTHON" bench/timing_fidelity/run_fidelity.py --kforge "$KFORGE" --python "$PYTHON" \
        --out "$OUT" --work "$work" --deadline "${FIDELITY_DEADLINE:-500}" \
        --time-budget "${FIDELITY_TIME_BUDGET:-10}" --modes "${FIDELITY_MODES:-pytorch,kernel}" \
        --phases "${FIDELITY_PHASES:-batch,standalone,repeat}" ${FIDELITY_BESIDE:+--reference-beside} 2>&1 | tee "$OUT/timing-fidelity.log"
      tar -czf "$OUT/timing-fidelity-work.tar.gz" -C "$work" --exclude='*.sqlite' . 2>/dev/null
      ;;
    tritonbench)
      logs=$(mktemp -d /tmp/kforge-tritonbench.XXXXXX)
      OUT="$logs" EFFICIENCY=0 TIME_BUDGET="${TIME_BUDGET:-1}" timeout 540 scripts/tritonbench-check.sh "$KFORGE" suite \
        2>&1 | tee "$OUT/tritonbench.log"
      tar -czf "$OUT/tritonbench.tar.gz" -C "$logs" --exclude='suite-checkout' --exclude='*.sqlite*' . 2>/dev/null
      ;;
    throughput)
      OUT="$OUT" KFORGE_BIN="$KFORGE" KFORGE_PYTHON="$PYTHON" BENCH_TIMEOUT_S="${BENCH_TIMEOUT_S:-520}" \
        TIME_BUDGET="${TIME_BUDGET:-1}" scripts/bench-throughput --phases kforge,stability --repeat 3
      ;;
    *)
      echo "unknown part $part (fidelity, tritonbench, throughput)"
      ;;
  esac
  echo "== $part: $(( $(date +%s) - start )) s"
done
