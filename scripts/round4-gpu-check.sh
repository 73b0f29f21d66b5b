#!/usr/bin/env bash
# The GPU checks of issues 30-35 after their merge, one part per device call (each under 9.5 minutes);
# logs and reports under $OUT/<part>/. Parts:
#   timing       bench/timing_fidelity (issue 31: self-speedup at 5 shapes x 6 sizes, both modes, against
#                a fresh process and do_bench).
#   honesty      the whole hostile corpus on cuda:0 at full size (issues 32/33: every exploit caught,
#                every honest candidate accepted), then scripts/serve-hardening-check.sh hangs static
#                (issue 34: 16 honest + 4 hanging submissions, the static path's latency), then
#                scripts/first-hour-check.sh (issue 30 on a GPU).
#   tritonbench  TritonBench-G items a-k, each gold file judged as its own answer with timing (issue 35
#                item 4: accepted share, reasons, self-speedups, items per minute). TB_VIEW names a view
#                made by `scripts/tritonbench_real.py view` and copied without links (default ext/tbG).
# Usage: OUT=/some/dir scripts/round4-gpu-check.sh PART...   (KFORGE_BIN, KFORGE_PYTHON as elsewhere)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/round4}
KFORGE=${KFORGE_BIN:-build/release/kforge}
PYTHON=${KFORGE_PYTHON:-python3}
export KFORGE_BIN="$KFORGE" KFORGE_PYTHON="$PYTHON" PYTHONUNBUFFERED=1

environment() {
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || true
  "$PYTHON" -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
  "$KFORGE" --version
  echo "cores $(nproc)"
}

for part in "$@"; do
  dir="$OUT/$part"
  mkdir -p "$dir"
  environment >"$dir/environment.txt" 2>&1
  start=$(date +%s)
  case "$part" in
    timing)
      OUT="$dir" FIDELITY_DEADLINE="${FIDELITY_DEADLINE:-480}" timeout 530 scripts/timing-fidelity-check.sh fidelity \
        >"$dir/fidelity-run.log" 2>&1
      tail -45 "$dir/timing_fidelity.md" 2>/dev/null
      ;;
    honesty)
      timeout 330 "$KFORGE" bench --corpus tests/corpus --device cuda:0 -j "${CORPUS_JOBS:-8}" --full-size \
        --no-store -o "$dir/corpus.json" >"$dir/corpus.txt" 2>"$dir/corpus.progress.txt"
      echo "== corpus: exit $? in $(( $(date +%s) - start )) s"
      grep -vE "^\s*$" "$dir/corpus.txt" | tail -30
      OUT="$dir/serve" timeout 200 scripts/serve-hardening-check.sh hangs static >"$dir/serve.log" 2>&1
      echo "== serve: exit $?"
      tail -30 "$dir/serve.log"
      OUT="$dir" timeout 100 scripts/first-hour-check.sh "$KFORGE" 2>&1 | tee "$dir/first-hour.log"
      ;;
    tritonbench)
      view=${TB_VIEW:-ext/tbG}
      timeout "${TB_TIMEOUT:-520}" "$KFORGE" eval --tritonbench "$view" --channel G --device cuda:0 -j "${TB_JOBS:-8}" \
        --time-budget "${TIME_BUDGET:-2}" --no-store --output "$dir/gold-G-a-k.json" \
        >"$dir/gold-G-a-k.txt" 2>"$dir/gold-G-a-k.err"
      echo "== gold G a-k: exit $? in $(( $(date +%s) - start )) s"
      tail -25 "$dir/gold-G-a-k.txt"
      "$PYTHON" scripts/tritonbench_real.py gold --report "$dir/gold-G-a-k.json" --out "$dir/gold-table" 2>&1 | tail -5
      ;;
    *) echo "unknown part $part (timing, honesty, tritonbench)" ;;
  esac
  echo "== $part: $(( $(date +%s) - start )) s"
done
