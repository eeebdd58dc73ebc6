"""A judge run through the vllm backend (vLLM's CPU build, in ``.venv-vllm``): a spec's
``eval.judge.backend: vllm`` grades its judge-graded questions greedy, text only, with the
engine arguments of ``eval.judge.model_args``; the judgements are stored and equal from one
run to the next. The tiny random model's verdicts are meaningless: the path is what is tested.

In the main ``.venv`` these tests skip; ``make test-vllm`` runs them with
``VIDEORL_REQUIRE_VLLM=1``, where a missing vLLM fails instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.eval.conftest import ROOT, write_predictions
from tests.eval.test_vllm_engine import HEAD_DIM, MODEL_ARGS, require_vllm
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks

VCR = ROOT / "task_specs" / "eval" / "vcr-bench.yaml"
JUDGE = [
    "vcr-bench:eval.judge.backend=vllm",
    f"vcr-bench:eval.judge.model_args={MODEL_ARGS},dtype=float32",
    "vcr-bench:eval.judge.max_new_tokens=8",
]


@pytest.fixture(scope="module", autouse=True)
def _vllm_installed() -> None:
    require_vllm()


@pytest.fixture(scope="module")
def judge_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("judge") / "qwen2.5-vl"
    made = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "tiny-model", str(path), "--family", "qwen2.5-vl",
         "--head-dim", str(HEAD_DIM)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return path


def _run(tmp_path: Path, name: str, judge_model: Path, overrides=JUDGE):
    tasks = load_tasks([VCR], fixture=True, protocol="official")
    gold = write_predictions(tmp_path / f"{name}-gold.jsonl", tasks)
    return run_eval(
        EvalConfig(specs=[VCR], out=tmp_path / name, backend="replay", predictions=gold,
                   fixture=True, protocol="official", overrides=list(overrides),
                   judge_model=str(judge_model))
    )  # fmt: skip


def _judgements(run: Path) -> list[dict | None]:
    return [json.loads(line).get("judge") for line in (run / "samples_vcr-bench.jsonl").open()]


def test_a_vllm_judge_grades_greedy_and_its_judgements_are_stored(judge_model, tmp_path):
    first = _run(tmp_path, "first", judge_model)
    task = first.tasks["vcr-bench"]
    assert task.judge["backend"] == "vllm" and task.judge["n_judged"] == 2
    judged = [block for block in _judgements(tmp_path / "first") if block]
    assert len(judged) == 2
    for block in judged:
        assert block["prompt"] and isinstance(block["output"], str) and block["fingerprint"]
    again = _run(tmp_path, "again", judge_model)
    assert _judgements(tmp_path / "again") == _judgements(tmp_path / "first")
    assert again.tasks["vcr-bench"].metrics == task.metrics
