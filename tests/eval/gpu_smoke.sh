#!/usr/bin/env bash
# GPU smoke run of the eval vllm backend: the synthetic benchmark specs evaluated by the tiny
# Qwen2.5-VL and Qwen3-VL through vLLM's async engine on a GPU, and by the transformers backend
# on the same cached frames; the two runs must have shown the model the same inputs, and vLLM's
# prompt token ids must equal the processor's.
#
# Needs one NVIDIA GPU and a Python with videorl-kit installed with vLLM's CUDA build
# (pip install -e ".[torch,data,eval,vllm]"); run from the repository root:
#   bash tests/eval/gpu_smoke.sh [WORK_DIR]
# Passes when both evals finish, their results validate, every sample's prompt hash agrees and the
# engine tests' prompt checks pass on the GPU.
set -euo pipefail
WORK="${1:-/tmp/videorl-eval-gpu-smoke}"
PY="${PYTHON:-python}"
rm -rf "$WORK" && mkdir -p "$WORK"

$PY -c "import torch, vllm; assert torch.cuda.is_available(), 'no GPU';
print('vllm', vllm.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))"

# synthetic data and a copy of its specs (their relative data paths resolve inside WORK)
cp -r task_specs "$WORK/"
touch "$WORK/pyproject.toml"
$PY -m videorl_kit synth "$WORK/data/synth" --n 4 --seed 0
SPECS=("$WORK"/task_specs/synth-multiple-choice.yaml "$WORK"/task_specs/synth-image-count.yaml
       "$WORK"/task_specs/synth-temporal.yaml "$WORK"/task_specs/synth-image-spatial.yaml)

for family in qwen2.5-vl qwen3-vl; do
    model="$WORK/models/$family"
    patch=28 && [ "$family" = qwen3-vl ] && patch=32  # the tiny vision towers' patch factors
    $PY -m videorl_kit tiny-model "$model" --family "$family" --head-dim 64
    for backend in vllm transformers; do
        $PY -m videorl_kit eval "${SPECS[@]}" --model "$model" --backend "$backend" \
            --store "$WORK/store" --seed 0 --set eval.generation.max_new_tokens=16 \
            --set budget.video.patch=$patch --set budget.image.patch=$patch \
            --out "$WORK/runs/$family-$backend"
    done
    $PY - "$WORK/runs/$family-vllm" "$WORK/runs/$family-transformers" <<'EOF'
import json, sys
from pathlib import Path
from videorl_kit.eval.results import load_results

def records(folder):
    results = load_results(folder)  # schema-checked
    print(folder.name, results.model.details.get("platform"),
          {t: (r.primary_metric, r.metrics[r.primary_metric].value) for t, r in results.tasks.items()})
    return {(r["task_id"], r["sample_id"]): r for f in sorted(folder.glob("samples_*.jsonl"))
            for r in map(json.loads, f.read_text().splitlines())}

on_vllm, on_hf = (records(Path(arg)) for arg in sys.argv[1:])
assert on_vllm and on_vllm.keys() == on_hf.keys(), "the two runs scored different samples"
differ = [k for k in on_vllm if on_vllm[k]["prompt_hash"] != on_hf[k]["prompt_hash"]]
assert not differ, f"prompt hashes differ between backends: {differ[:5]}"
same = sum(on_vllm[k]["response"] == on_hf[k]["response"] for k in on_vllm)
print(f"{len(on_vllm)} samples, same inputs; greedy responses equal on {same}")
EOF
done

# vLLM's own token ids for each request equal the processor's input_ids, vision tokens counted
# from the cached frames, the same next-token distribution as transformers (the CPU tests' checks)
VIDEORL_REQUIRE_VLLM=1 $PY -m pytest -q tests/eval/test_vllm_engine.py \
    -k "prompt or timestamps or distribution or rejects"
echo "GPU smoke run passed: $WORK/runs"
