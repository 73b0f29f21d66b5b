#!/usr/bin/env bash
# Issue 30's behaviour on a GPU, in one call (the CPU side is tests/python/test_first_hour.py and
# test_interrupts.py): --device auto keeps the full size on a GPU; the live output shows the timing
# rounds; Ctrl-C during GPU timing leaves no /dev/shm entry, scratch folder or worker; a TritonBench
# header names cuda:0. Prints PASS/FAIL per check; logs go to $OUT/first-hour/.
#   Usage: scripts/first-hour-check.sh [KFORGE_BINARY]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
KFORGE="$(realpath "${1:-build/release/kforge}")"
LOGS="$(realpath -m "${OUT:-out}/first-hour")"
mkdir -p "$LOGS"
export KFORGE_STORE="$LOGS/store.sqlite"
SOFTMAX=problems/starter/04_softmax
failures=0
check() {  # check NAME CONDITION-EXIT-CODE
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1 (see $LOGS)"; failures=$((failures + 1)); fi
}

# 1. --device auto on a GPU: the full size, no small-size note, a timed speedup.
"$KFORGE" eval -p "$SOFTMAX/problem.py" -c "$SOFTMAX/solution.py" --no-store >"$LOGS/auto.txt" 2>&1
code=$?
! grep -q "KFORGE_SMALL" "$LOGS/auto.txt" && grep -q "PASS performance  speedup" "$LOGS/auto.txt" &&
  grep -q "(cuda:0)" "$LOGS/auto.txt" && [ "$code" -eq 0 ]
check "auto on a GPU runs the full size and times it" $?

# 2. On a terminal the timing rounds show as progress (script(1) gives kforge a pty).
script -qfec "'$KFORGE' eval -p $SOFTMAX/problem.py -c $SOFTMAX/solution.py --no-store --time-budget 8 \
  --noise-target 0.0005" /dev/null >"$LOGS/progress.txt" 2>&1
grep -q "performance  timing: [0-9]* paired round" "$LOGS/progress.txt"
check "the live output shows the timing rounds" $?

# 3. SIGINT in the middle of GPU timing: exit 130, nothing left behind.
scratch="$LOGS/tmp"
rm -rf "$scratch" && mkdir -p "$scratch"
TMPDIR="$scratch" "$KFORGE" eval -p "$SOFTMAX/problem.py" -c "$SOFTMAX/solution.py" --no-store \
  --time-budget 60 --noise-target 0.0001 >"$LOGS/interrupt.txt" 2>&1 &
pid=$!
for _ in $(seq 1 120); do  # until the timing rounds run (the judge and candidate are up)
  grep -q "PASS runtime" "$LOGS/interrupt.txt" && break
  sleep 1
done
sleep 3
kill -INT "$pid"
wait "$pid"
code=$?
sleep 1
left_shm=$(find /dev/shm -maxdepth 1 -name "kforge-$pid-*" | wc -l)
left_tmp=$(find "$scratch" -mindepth 1 -maxdepth 1 | wc -l)
left_workers=0
for proc in /proc/[0-9]*; do
  case "$(readlink "$proc/cwd" 2>/dev/null)" in "$scratch"*) left_workers=$((left_workers + 1)) ;; esac
done
echo "exit $code; /dev/shm entries $left_shm; temp entries $left_tmp; workers $left_workers" >>"$LOGS/interrupt.txt"
[ "$code" -eq 130 ] && [ "$left_shm" -eq 0 ] && [ "$left_tmp" -eq 0 ] && [ "$left_workers" -eq 0 ] &&
  grep -q "interrupted by SIGINT" "$LOGS/interrupt.txt"
check "SIGINT during GPU timing exits 130 and leaves nothing" $?

# 4. A TritonBench run on cuda:0 names cuda:0 in its header.
"$KFORGE" eval --tritonbench tests/fixtures/tritonbench --channel T \
  --samples tests/fixtures/tritonbench/predictions_T.jsonl --device cuda:0 --no-store >"$LOGS/tritonbench.txt" 2>&1
head -1 "$LOGS/tritonbench.txt" | grep -q "^TritonBench-T on cuda:0"
check "the TritonBench header names cuda:0" $?

echo "$failures check(s) failed"
exit "$failures"
