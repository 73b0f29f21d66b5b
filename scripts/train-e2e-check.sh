#!/usr/bin/env bash
# The training pipeline end to end on one GPU (issue 7): verified SFT data from the inductor teacher,
# a tiny random causal LM built offline, a few SFT steps with TRL, then a few GRPO steps rewarded by a
# live `kforge serve` on the same machine. Logs and summaries go under $OUT/train.
#   scripts/train-e2e-check.sh            (with trl, datasets and their wheels on PYTHONPATH)
set -u
KFORGE=${KFORGE_BIN:-build/device/kforge}
RESULTS=${OUT:-/tmp}/train
WORK=${WORK:-/tmp/kforge-train-e2e}
PROBLEMS=${PROBLEMS:-"01_scaled_add 03_row_sum 05_layernorm 07_rmsnorm 09_silu_channel_affine 22_hardswish"}
mkdir -p "$RESULTS" "$WORK/suite"
export PYTHONPATH="$PWD/python:$PWD/clients/python${PYTHONPATH:+:$PYTHONPATH}"
for name in $PROBLEMS; do cp -r "problems/starter/$name" "$WORK/suite/"; done
step() { echo "== $1 ($(date +%T))"; }

step "SFT data: the inductor teacher"
"$KFORGE" data sft --suite "$WORK/suite" --teacher inductor --output "$RESULTS/sft.jsonl" --no-store \
  --concurrent-problems 6 || exit 1
"$KFORGE" data prompts --suite "$WORK/suite" --output "$RESULTS/prompts.jsonl" || exit 1

step "a tiny random causal LM"
python3 -m kforge.train.tiny_model --texts "$RESULTS/sft.jsonl" "$RESULTS/prompts.jsonl" --out "$WORK/tiny" || exit 1

step "SFT (TRL SFTTrainer)"
python3 -m kforge.train.sft_recipe --model "$WORK/tiny" --data "$RESULTS/sft.jsonl" --out "$WORK/sft" \
  --steps 4 --accumulation 1 --save-steps 4 || exit 1
cp "$WORK/sft/kforge-sft-summary.json" "$RESULTS/"

step "kforge serve"
head -c 24 /dev/urandom | base64 > "$WORK/token"
"$KFORGE" serve --port 8123 --token-file "$WORK/token" --no-store -j 4 > "$RESULTS/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null' EXIT
for _ in $(seq 60); do curl -sf http://127.0.0.1:8123/v1/health > /dev/null && break; sleep 1; done

step "GRPO (TRL GRPOTrainer, rewards from kforge serve)"
KFORGE_URL=http://127.0.0.1:8123 KFORGE_TOKEN_FILE="$WORK/token" \
  python3 -m kforge.train.grpo_recipe --model "$WORK/sft" --prompts "$RESULTS/prompts.jsonl" \
  --out "$WORK/grpo" --group 4 --batch 4 --steps 3 --max-completion 256 --save-steps 3 --lr 1e-5 || exit 1
cp "$WORK/grpo/kforge-grpo-summary.json" "$RESULTS/"
ls -R "$WORK/sft" "$WORK/grpo" | grep -E "checkpoint|safetensors" > "$RESULTS/checkpoints.txt"
curl -s http://127.0.0.1:8123/metrics -H "Authorization: Bearer $(cat "$WORK/token")" \
  | grep -E "^kforge_evaluations_total" > "$RESULTS/serve-metrics.txt"
step "done"
