#!/usr/bin/env bash
# One device call of the Inductor teacher over KernelBench (issue 35 item 6; docs/benchmarks.md,
# "KernelBench levels 1 and 2 with the Inductor teacher"), inside the call's 600 s:
#   PHASE=capture  compile every problem CAPTURES has no answer for, the LEVELS side by side
#                  (their answers, timeouts included, are kept: a later call compiles only the rest);
#   PHASE=judge    judge and time the captured candidates, keeping PREVIOUS's verdicts (a teacher --out);
# then pack what the next call and the write-up need under $OUT. Both phases need a GPU.
#   OUT=$OUT KB=ext/KernelBench CAPTURES=diag/cap PHASE=capture LEVELS="1 2 3" scripts/kernelbench-teacher-gpu.sh
#   OUT=$OUT KB=ext/KernelBench CAPTURES=diag/cap PHASE=judge PREVIOUS=diag/kt/prev scripts/kernelbench-teacher-gpu.sh
#   (EVAL_DEADLINE=150 BENCH_DEADLINE=340: a call that mostly finishes the do_bench of earlier verdicts;
#   ONLY=7_GoogleNetInceptionV1,26_ShuffleNet: the capture compiles only these, when longer ones come first)
# KB (a KernelBench checkout, or a view of it) and CAPTURES travel with the call (`run`'s carry), as
# does build/release; nothing of the checkout is copied into the repository.
set -u
cd "$(dirname "$0")/.." || exit 1
: "${OUT:?set OUT}" "${KB:?set KB to a KernelBench checkout}" "${CAPTURES:?set CAPTURES}" "${PHASE:?capture or judge}"
LEVELS=${LEVELS:-1 2 3}
LIMIT=${LIMIT:-550}            # seconds for the phase's work, leaving the call time to pack
CAPTURE_JOBS=${CAPTURE_JOBS:-5}  # compiles at once per level (10 on 16 cores ran level 3 past every timeout)
CAPTURE_TIMEOUT=${CAPTURE_TIMEOUT:-250}
export KFORGE_PYTHON=${KFORGE_PYTHON:-python3} PYTHONUNBUFFERED=1
START=$SECONDS
mkdir -p "$OUT" "$CAPTURES"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; build/release/kforge --version; } \
  > "$OUT/env.txt" 2>&1

capture_level() {  # level: none started after the deadline, so each ends within LIMIT
  timeout "$LIMIT" python3 scripts/kernelbench-teacher.py --captures "$CAPTURES" --kernelbench "$KB" \
    --levels "$1" --device cuda:0 --steps capture --capture-jobs "$CAPTURE_JOBS" \
    --capture-timeout "$CAPTURE_TIMEOUT" --capture-deadline $((LIMIT - CAPTURE_TIMEOUT - 20)) \
    ${ONLY:+--only "$ONLY"} --out "$OUT/capture$1" > "$OUT/capture$1.log" 2>&1
  echo "level $1: rc=$? at $((SECONDS - START)) s" >> "$OUT/times.txt"
}

case "$PHASE" in
  capture)
    for level in $LEVELS; do capture_level "$level" & done
    wait
    tar -czf "$OUT/captures.tgz" -C "$(dirname "$CAPTURES")" "$(basename "$CAPTURES")"
    ;;
  judge)
    previous=()
    [ -n "${PREVIOUS:-}" ] && previous=(--previous "$PREVIOUS")
    # Each level's judging and do_bench share LIMIT (3/4 and 1/5 of a level's share, or EVAL_DEADLINE
    # and BENCH_DEADLINE seconds: a call that only finishes a level's do_bench wants most for it); a
    # level cut short goes on in the next call.
    per_level=$((LIMIT / $(echo "$LEVELS" | wc -w)))
    timeout "$LIMIT" python3 scripts/kernelbench-teacher.py --captures "$CAPTURES" --kernelbench "$KB" \
      --levels "$(echo "$LEVELS" | tr ' ' ',')" --device cuda:0 --steps eval,do_bench --jobs "${JOBS:-3}" \
      --deadline "${EVAL_DEADLINE:-$((per_level * 3 / 4))}" \
      --bench-deadline "${BENCH_DEADLINE:-$((per_level / 5))}" --time-budget 1 \
      "${previous[@]}" --out "$OUT/teacher" --work "${WORK:-$(dirname "$CAPTURES")/teacher-work}" \
      > "$OUT/teacher.log" 2>&1
    echo "judge: rc=$? at $((SECONDS - START)) s" >> "$OUT/times.txt"
    tar -czf "$OUT/teacher.tgz" -C "$OUT" teacher
    ;;
  *)
    echo "PHASE must be capture or judge, not $PHASE" >&2
    exit 2
    ;;
esac
cat "$OUT/times.txt"
for level in $LEVELS; do
  answers=$(find "$CAPTURES/level$level" -name '*.result.json' 2>/dev/null | wc -l)
  captures=$(find "$CAPTURES/level$level" -name '*.capture.json' 2>/dev/null | wc -l)
  echo "level $level: $answers answers, $captures captures"
done
[ -f "$OUT/teacher/teacher.md" ] && grep -E "^### |^kinds" "$OUT/teacher/teacher.md"
exit 0
