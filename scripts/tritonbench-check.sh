#!/usr/bin/env bash
# TritonBench support on the GPU, in one call (docs/tritonbench.md). Logs and JSON reports go to
# $OUT/tritonbench/. Parts (default: all):
#   fixture  the self-written miniature checkout (tests/fixtures/tritonbench), channels G and T, with the
#            model answers there (correct, wrong, crashing, torch-calling), GPU efficiency measured;
#   suite    problems/kernels laid out as a channel-G checkout, every gold file judged as its own answer;
#   answers  the tuner's drop-in best.py of a few suite kernels as a folder of channel-G answers.
#   Usage: scripts/tritonbench-check.sh [KFORGE_BINARY] [PART ...]   (ITEMS=a,b limits suite/answers;
#   EFFICIENCY=0 skips the ncu profiling of accepted answers, for runs that only need the speedups)
set -uo pipefail
cd "$(dirname "$0")/.."
KFORGE="${1:-build/device/kforge}"
shift || true
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(fixture suite answers)
LOGS="${OUT:-out}/tritonbench"
mkdir -p "$LOGS"
export KFORGE_STORE="$LOGS/store.sqlite"
checkout="$LOGS/suite-checkout"
mkdir -p "$checkout/data/TritonBench_G_v1"
cp problems/kernels/*.py "$checkout/data/TritonBench_G_v1/"
items=()
[ -n "${ITEMS:-}" ] && items=(--items "$ITEMS")

judge() {  # NAME ARGS...: one kforge eval --tritonbench run, its table and JSON kept
  local name="$1"
  shift
  local start
  start=$(date +%s)
  local efficiency=(--efficiency)
  [ "${EFFICIENCY:-1}" = 0 ] && efficiency=()
  "$KFORGE" eval --device cuda:0 "${efficiency[@]}" --time-budget "${TIME_BUDGET:-3}" "$@" \
    --output "$LOGS/$name.json" >"$LOGS/$name.txt" 2>"$LOGS/$name.err"
  echo "== $name: exit $? in $(( $(date +%s) - start )) s"
  cat "$LOGS/$name.txt"
}

for part in "${parts[@]}"; do
  case "$part" in
    fixture)
      judge fixture-G --tritonbench tests/fixtures/tritonbench --channel G \
        --samples tests/fixtures/tritonbench/predictions_G.jsonl
      judge fixture-T --tritonbench tests/fixtures/tritonbench --channel T \
        --samples tests/fixtures/tritonbench/predictions_T.jsonl
      ;;
    suite)
      judge suite-gold --tritonbench "$checkout" --channel G "${items[@]}"
      ;;
    answers)
      mkdir -p "$LOGS/answers"
      IFS=, read -r -a names <<<"${ANSWER_ITEMS:-softmax_rows,layernorm_fwd,matmul_bias_relu_fp16}"
      for name in "${names[@]}"; do
        "$KFORGE" optimize --kernel "problems/kernels/$name.py" --entry "$name" --device cuda:0 \
          --inputs "problems/kernels/$name.inputs.json" --budget "${BUDGET:-8}" --screen-time 0.3 \
          --final-time 1 --no-profile --out-dir "$LOGS/optimize-$name" >"$LOGS/optimize-$name.txt" 2>&1
        echo "optimize $name: exit $? $(grep -m1 'evaluations; best' "$LOGS/optimize-$name.txt")"
        cp "$LOGS/optimize-$name/best.py" "$LOGS/answers/$name.py" 2>/dev/null
      done
      judge suite-answers --tritonbench "$checkout" --channel G --samples "$LOGS/answers"
      ;;
    *) echo "unknown part $part (fixture, suite, answers)" ;;
  esac
done
