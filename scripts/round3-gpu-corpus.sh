#!/usr/bin/env bash
# Honest verdicts, rounds 2 and 3 (issue 32 items 4-6 and 8, issue 33 items 1, 3 and 4) on a GPU, in one
# device call: the new corpus classes and the honest candidates at full size on cuda:0 with the prebuilt
# kforge, one `kforge bench` per class. Logs and JSON reports go to $OUT; the last lines print one summary
# per class. Expect every entry "caught" (exploits) or "passed" (honest); the CPU-only entry is skipped.
# Then run `scripts/gpu-check corpus` for the whole corpus (every class, GPU-only entries included).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/round3-gpu}
mkdir -p "$OUT"
KFORGE=${KFORGE_BIN:-build/release/kforge}
export KFORGE_PYTHON=${KFORGE_PYTHON:-python3} PYTHONUNBUFFERED=1
CLASSES=(host-computation launch-callbacks python-in-kernel forged-reply dispatch-mode recorder-removal
         unicode-spelling honest)
status=0
for class in "${CLASSES[@]}"; do
  "$KFORGE" bench --corpus tests/corpus --device cuda:0 -j "${KFORGE_CORPUS_JOBS:-4}" --full-size \
    --only "$class" -o "$OUT/corpus-$class.json" >"$OUT/corpus-$class.txt" 2>"$OUT/corpus-$class.progress.txt"
  code=$?
  [ "$code" -eq 0 ] || status=1
  echo "== $class (exit $code)"
  grep -E "caught on their documented path|wrong-path|missed|error" "$OUT/corpus-$class.txt" | head -20
done
exit "$status"
