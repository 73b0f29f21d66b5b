#!/usr/bin/env bash
# The program_order knob on the GPU, in one call: the 2-D-grid matmul (tests/data/optimize/
# matmul_fp16_2d_grid.py) written with each program order by `kforge knobs --set` and timed by
# `kforge eval` (same tiles, only the order differs), then `kforge optimize` from the unordered start.
# Logs go to $OUT/program-order/.   Usage: scripts/program-order-check.sh [KFORGE_BINARY]
set -uo pipefail
cd "$(dirname "$0")/.."
KFORGE="${1:-build/device/kforge}"
LOGS="${OUT:-out}/program-order"
mkdir -p "$LOGS"
PROBLEM=problems/baseline/07_matmul_fp16/problem.py
START=tests/data/optimize/matmul_fp16_2d_grid.py
export KFORGE_STORE="$LOGS/store.sqlite"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$LOGS/gpu.txt" 2>&1
"$KFORGE" knobs --candidate "$START" >"$LOGS/knobs.txt" 2>&1
for group in 0 1 4 8 16; do
  "$KFORGE" knobs --candidate "$START" --set "program_order=$group" --output "$LOGS/order-$group.py" ||
    echo "knobs --set program_order=$group failed: exit $?"
done
for round in 1 2; do  # twice, in opposite orders, so drift between runs shows
  groups="0 1 4 8 16"; [ "$round" = 2 ] && groups="16 8 4 1 0"
  for group in $groups; do
    "$KFORGE" eval -p "$PROBLEM" -c "$LOGS/order-$group.py" --device cuda:0 --no-store --time-budget 5 \
      >"$LOGS/eval-$group-$round.txt" 2>&1
    echo "program_order=$group round $round: exit $? $(grep -m1 -o 'speedup.*' "$LOGS/eval-$group-$round.txt")"
  done
done
start=$(date +%s)
"$KFORGE" optimize -p "$PROBLEM" --from "$START" --device cuda:0 --budget "${BUDGET:-30}" --screen-time 0.3 \
  --final-time 1 --out-dir "$LOGS/optimize" >"$LOGS/optimize.txt" 2>&1
echo "optimize: exit $? in $(( $(date +%s) - start )) s"
cat "$LOGS/optimize.txt"
grep -o '"name": "program_order"[^}]*' "$LOGS/optimize/report.json" 2>/dev/null | head -3
