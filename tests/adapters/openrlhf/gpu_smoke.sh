#!/usr/bin/env bash
# GPU smoke run of the OpenRLHF backend: the tiny Qwen2.5-VL trains a few GRPO steps through a
# run bundle with real Ray, vLLM and DeepSpeed, native video (the start-up patches included).
#
# Needs one NVIDIA GPU and a Python with openrlhf[vllm]==0.11.2 (and flash-attn built for it)
# plus this kit installed (pip install -e ".[torch]"); run from the repository root:
#   bash tests/adapters/openrlhf/gpu_smoke.sh [WORK_DIR]
# Passes when the job succeeds; prints the reward lines of its log and the bundle's folder.
set -euo pipefail
WORK="${1:-/tmp/videorl-openrlhf-smoke}"
STEPS="${STEPS:-3}"
PY="${PYTHON:-python}"
rm -rf "$WORK" && mkdir -p "$WORK"

$PY -c "import openrlhf, vllm, deepspeed, torch; assert torch.cuda.is_available(), 'no GPU';
print('openrlhf', openrlhf.__version__ if hasattr(openrlhf, '__version__') else '?',
      'vllm', vllm.__version__, 'torch', torch.__version__)"

# synthetic data and its frame cache, in a copy of the recipes and specs (nothing downloaded)
cp -r recipes task_specs "$WORK/"
$PY -m videorl_kit synth "$WORK/data/synth" --n 8 --seed 0
$PY -m videorl_kit build-cache "$WORK"/task_specs/tiny/*.yaml --store "$WORK/store"

# the bundle (tiny-grpo's openrlhf section sizes it for one GPU), checked by OpenRLHF's parser
$PY -m videorl_kit train "$WORK/recipes/tiny-grpo.yaml" --backend openrlhf --dry-run \
    --max-steps "$STEPS" --output "$WORK/run"
$PY - "$WORK/run/argv.json" <<'EOF'
import json, sys
from videorl_kit.adapters.openrlhf.parser_check import OpenRLHFParser
verdict = OpenRLHFParser().check(json.load(open(sys.argv[1])))
assert verdict.accepted, verdict.error
print("argv accepted by OpenRLHF's parser")
EOF

# a one-GPU Ray head on this machine, the job, and the head's shutdown whatever happens
ray start --head --num-gpus 1 --dashboard-host 127.0.0.1 --disable-usage-stats
trap 'ray stop --force >/dev/null 2>&1 || true' EXIT
RAY_ADDRESS=http://127.0.0.1:8265 bash "$WORK/run/launch.sh" 2>&1 | tee "$WORK/job.log"
grep -E "reward|accuracy|task/" "$WORK/job.log" | tail -n 20 || true
echo "GPU smoke run passed: $WORK/run"
