#!/usr/bin/env bash
# Kernel mode on the GPU, in one call: each kernel file of problems/kernels (with its .inputs.json) is
# judged against itself, optimized with the tuner (--budget, default 16), and its drop-in best.py judged
# again as a variant of the original. Logs go to $OUT/kernel-mode/.
#   Usage: scripts/kernel-mode-check.sh [KFORGE_BINARY] [NAME ...]
set -uo pipefail
cd "$(dirname "$0")/.."
KFORGE="${1:-build/device/kforge}"
shift || true
LOGS="${OUT:-out}/kernel-mode"
mkdir -p "$LOGS"
export KFORGE_STORE="$LOGS/store.sqlite"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for file in problems/kernels/*.py; do names+=("$(basename "$file" .py)"); done
fi
for name in "${names[@]}"; do
  file="problems/kernels/$name.py"
  entry=$(grep -m1 -oP '^# kforge-entry: \K\w+' "$file" || echo "$name")
  args=(--kernel "$file" --entry "$entry" --device cuda:0)
  [ -f "problems/kernels/$name.inputs.json" ] && args+=(--inputs "problems/kernels/$name.inputs.json")
  writes=$(grep -m1 -oP '^# kforge-writes: \K[0-9,]+' "$file" || true)
  [ -n "$writes" ] && args+=(--writes "$writes")
  "$KFORGE" eval "${args[@]}" >"$LOGS/$name-self.txt" 2>&1
  echo "$name: self exit $? $(grep -m1 -o 'speedup [^;]*' "$LOGS/$name-self.txt")"
  start=$(date +%s)
  "$KFORGE" optimize "${args[@]}" --budget "${BUDGET:-16}" --screen-time 0.3 --final-time 1 --no-profile \
    --out-dir "$LOGS/$name-optimize" >"$LOGS/$name-optimize.txt" 2>&1
  echo "$name: optimize exit $? in $(( $(date +%s) - start )) s: $(grep -m1 'evaluations; best' "$LOGS/$name-optimize.txt")"
  "$KFORGE" eval "${args[@]}" --candidate "$LOGS/$name-optimize/best.py" >"$LOGS/$name-best.txt" 2>&1
  echo "$name: best.py as a variant: exit $? $(grep -m1 -o 'speedup [^;]*' "$LOGS/$name-best.txt")"
done
