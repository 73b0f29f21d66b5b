#!/usr/bin/env bash
# The reward service's hardening (issue 34) on a GPU machine, in one device call of under 10 minutes:
#   hangs   16 honest + 4 hanging submissions at once after the 16 alone (bench/serve_load/hang_slots.py):
#           the honest ones finish no later than alone + one call limit; every problem there is a
#           client's, so its judge runs in the sandbox on the GPU (CUDA IPC from a sandboxed judge).
#   static  the static-rejection path at 200 requests/s, three runs (p99 target 5 ms), and one at 50/s.
#   grpo    16 prompt groups x 4 completions over 16 starter problems, all client-sent: every judge is
#           sandboxed, timing included; the rewards must come out as expected.
# Usage: scripts/serve-hardening-check.sh [hangs|static|grpo|all]...   JSON, markdown and logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/serve-hardening}
mkdir -p "$OUT"
KFORGE=${KFORGE_BIN:-build/release/kforge}
PYTHON=${KFORGE_PYTHON:-python3}
DEVICE=${KFORGE_DEVICE:-cuda:0}  # cpu: a smoke run of this script (problems at their small sizes)
SIZE=(--full-size)
[[ $DEVICE == cpu ]] && SIZE=()
export PYTHONUNBUFFERED=1
phases=("${@:-all}")
wants() { [[ " ${phases[*]} " == *" $1 "* || " ${phases[*]} " == *" all "* ]]; }

{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "no GPU"
  "$PYTHON" -c "import torch, triton, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
  "$KFORGE" --version
  echo "cores $(nproc)"
} | tee "$OUT/environment.txt"

status=0
if wants hangs; then
  echo "== hangs"
  "$PYTHON" bench/serve_load/hang_slots.py --kforge "$KFORGE" --python "$PYTHON" --device "$DEVICE" ${SIZE[@]+"${SIZE[@]}"} \
    -j 16 --time-budget 1 --json-out "$OUT/hangs-gpu.json" >"$OUT/hangs-gpu.md" 2>"$OUT/hangs-gpu.log" || status=1
  cat "$OUT/hangs-gpu.md"
fi
if wants static; then
  echo "== static"
  for run in 1 2 3; do
    "$PYTHON" bench/serve_load/serve_load.py load --kforge "$KFORGE" --python "$PYTHON" --device "$DEVICE" \
      --only static-reject --real 0 --hangs 0 --crashes 0 --forks 0 --flood 0 --idle-s 15 \
      --json-out "$OUT/static-200-$run.json" >"$OUT/static-200-$run.md" 2>"$OUT/static-200-$run.log" || status=1
    grep -E "Rejected by static|Memory|idle" "$OUT/static-200-$run.md"
  done
  "$PYTHON" bench/serve_load/serve_load.py load --kforge "$KFORGE" --python "$PYTHON" --device "$DEVICE" --rate 50 \
    --requests 1500 --only static-reject --real 0 --hangs 0 --crashes 0 --forks 0 --flood 0 \
    --json-out "$OUT/static-50.json" >"$OUT/static-50.md" 2>"$OUT/static-50.log" || status=1
  grep -E "Rejected by static" "$OUT/static-50.md"
fi
if wants grpo; then
  echo "== grpo"
  "$PYTHON" bench/serve_load/serve_load.py grpo --kforge "$KFORGE" --python "$PYTHON" --device "$DEVICE" \
    ${SIZE[@]+"${SIZE[@]}"} --prompts 16 --group 4 --jobs 16 --time-budget 1 --deadline 400 \
    --json-out "$OUT/grpo.json" >"$OUT/grpo.md" 2>"$OUT/grpo.log" || status=1
  cat "$OUT/grpo.md"
fi
echo "serve-hardening-check: exit $status"
exit $status
