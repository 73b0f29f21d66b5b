#!/usr/bin/env bash
# Issue 32 item 10 on a GPU, in one device call (< 8 minutes): the Inductor teacher's candidates for the
# captured KernelBench problems (full sizes, one batch) and the TritonBench-G gold files a-k judged
# against themselves (8 parallel groups), side by side; then the relative-variation distribution is
# not re-measured here (scripts/measure-variation.py --device cuda:0 does that, longer). Every result is
# classified (accepted / specialised / honesty check / wrong / no verdict); the table and JSON go to
# $OUT/false-positives/. Usage:
#   scripts/false-positive-gpu-check.sh [KFORGE_BINARY] [CAPTURES] [KERNELBENCH] [TRITONBENCH]
# Needs the captures (level<N>/*.capture.json, made on a GPU) and the two public checkouts on the machine.
set -uo pipefail
cd "$(dirname "$0")/.."
export KFORGE_BIN="${1:-build/release/kforge}"
export KFORGE_PYTHON="${KFORGE_PYTHON:-python3}"
export OUT="${OUT:-out}"
export KFORGE_STORE="$OUT/false-positives-store.sqlite"
export TEACHER_TIMEOUT="${TEACHER_TIMEOUT:-400}" TRITONBENCH_TIMEOUT="${TRITONBENCH_TIMEOUT:-400}"
start=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
"$KFORGE_PYTHON" scripts/false-positive-check.py --device cuda:0 --jobs 4 \
  --captures "${2:-/work/captures/cap}" --kernelbench "${3:-/work/ext/ScalingIntelligence+KernelBench}" \
  --tritonbench "${4:-/work/ext/thunlp+TritonBench}" --out "$OUT/false-positives"
echo "== done in $(( $(date +%s) - start )) s; table: $OUT/false-positives/false-positives.txt"
