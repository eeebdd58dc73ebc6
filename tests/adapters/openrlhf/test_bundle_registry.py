"""A bundle's ``reward_func.py`` finds the built-in problem types and verifiers with the kit's
copy alone: on a Ray node the kit arrives through ``py_modules`` without its installed
metadata, so without the ``videorl_kit.problem_types`` entry point."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adapters.openrlhf.test_bundle import native_bundle  # noqa: F401 - a fixture
from tests.rewards.test_registration import run_without_kit_metadata

SCORE_EVERY_TASK = """
import importlib.util, json, sys
from pathlib import Path

bundle = Path({bundle!r})
spec = importlib.util.spec_from_file_location("reward_func", bundle / "reward_func.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)  # as OpenRLHF loads it: by path, in a fresh process

import videorl_kit
from videorl_kit.adapters.openrlhf.labels import decode_label

assert Path(videorl_kit.__file__).is_relative_to(bundle / "kit"), videorl_kit.__file__
prompt = "<|im_start|>user\\nQ<|im_end|>\\n<|im_start|>assistant\\n"
for file in sorted((bundle / "data").glob("train.*.jsonl")):
    label = json.loads(file.read_text().splitlines()[0])["label"]
    answer = decode_label(label).answer
    out = module.reward_func([prompt + f"<answer>{{answer}}</answer><|im_end|>"], [prompt], [label])
    print(decode_label(label).problem_type, out["rewards"])
"""


def test_reward_func_scores_every_task_with_the_bundles_kit_alone(native_bundle, tmp_path):  # noqa: F811
    code = SCORE_EVERY_TASK.format(bundle=str(native_bundle))
    done = run_without_kit_metadata(code, native_bundle / "kit", farm_in=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    scored = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())
    tasks = json.loads((native_bundle / "tasks.resolved.json").read_text())["tasks"]
    assert len(scored) >= 4 and set(scored.values()) == {"1.0"}, done.stdout
    assert len(done.stdout.splitlines()) == len(tasks)
    assert Path(native_bundle / "kit" / "videorl_kit" / "rewards" / "registry.py").is_file()
