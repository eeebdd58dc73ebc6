"""Parity with lmms-eval 0.7.3: the same answers scored by the kit (``eval --backend replay``,
official protocol) and by lmms-eval's own benchmark scoring functions, imported unchanged in
their own venv (``make lmms-eval-env``: ``.venv-lmms``), for every benchmark the two share.

Every disagreement must be classified in :mod:`tests.eval.lmms_parity.classified` (and so in
docs/eval.md); none may be the kit's fault. Without ``.venv-lmms`` these tests skip, except
under ``VIDEORL_REQUIRE_LMMS_EVAL=1`` (``make test-lmms-parity``, part of ``make test``), where
a missing venv fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.eval.lmms_parity.cases import SHARED, Case, responses
from tests.eval.lmms_parity.classified import KIT_WRONG, classify, markdown_table, rows
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import EvalTask, load_tasks
from videorl_kit.rewards.task import TaskReward

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "task_specs" / "eval"
DRIVER = ROOT / "tests" / "eval" / "lmms_parity" / "driver.py"
LMMS_PYTHON = Path(os.environ.get("VIDEORL_LMMS_PYTHON", ROOT / ".venv-lmms" / "bin" / "python"))
REQUIRED = os.environ.get("VIDEORL_REQUIRE_LMMS_EVAL") == "1"


def _lmms_python() -> Path:
    if LMMS_PYTHON.is_file():
        return LMMS_PYTHON
    message = f"lmms-eval's venv is missing ({LMMS_PYTHON}); create it with `make lmms-eval-env`"
    if REQUIRED:
        pytest.fail(message + " (VIDEORL_REQUIRE_LMMS_EVAL=1 forbids skipping)")
    pytest.skip(message)


def _task(spec_id: str) -> EvalTask:
    (task,) = load_tasks([SPECS / f"{spec_id}.yaml"], fixture=True, protocol="official")
    return task


def _kit_cases() -> tuple[list[Case], list[tuple[float, str]]]:
    cases, verdicts = [], []
    for spec_id, (bench, doc) in SHARED.items():
        task = _task(spec_id)
        reward = TaskReward.from_spec(task.spec)
        for sample in task.samples:
            for form, pred in responses(sample).items():
                cases.append(Case(spec_id, sample.sample_id, form, bench, doc(sample), pred))
                result = reward.score_sample(sample, pred)
                verdicts.append((result.accuracy, result.status))
    return cases, verdicts


def lmms_scores(cases: list[Case]) -> list[dict]:
    """lmms-eval's verdict on each case (one run of the driver in lmms-eval's venv)."""
    payload = json.dumps([{"bench": c.bench, "doc": c.doc, "pred": c.pred} for c in cases])
    done = subprocess.run(
        [str(_lmms_python()), str(DRIVER)], input=payload, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def parity() -> list[tuple[Case, tuple[float, str], dict]]:
    cases, kit = _kit_cases()
    return list(zip(cases, kit, lmms_scores(cases), strict=True))


def _agrees(kit: tuple[float, str], lmms: dict) -> bool:
    accuracy, status = kit
    return lmms["path"] == "rule" and status == "ok" and abs(accuracy - lmms["score"]) < 1e-3


def test_every_shared_benchmark_is_compared(parity):
    names = {case.spec for case, _, _ in parity}
    assert names == set(SHARED)
    assert len(parity) >= 700


def test_every_disagreement_is_classified_and_none_is_the_kits_fault(parity):
    found: dict[tuple[str, str], list[str]] = {}
    for case, kit, lmms in parity:
        if not _agrees(kit, lmms):
            found.setdefault((case.spec, case.form), []).append(
                f"{case.name}: kit {kit[0]:.2f} ({kit[1]}), lmms-eval {lmms['score']} "
                f"({lmms['path']}), answer {case.pred!r}"
            )
    unclassified = [cases[0] for key, cases in found.items() if classify(*key) is None]
    assert not unclassified, "classify these in tests/eval/lmms_parity/classified.py:\n" + (
        "\n".join(unclassified)
    )
    stale = [
        f"{row.form} on {spec}"
        for row in rows()
        for spec in row.specs
        if row.pending is None and (spec, row.form) not in found
    ]
    assert not stale, f"classified disagreements that no longer occur (remove them): {stale}"
    wrong = [key for key in found if (row := classify(*key)) and row.kind == KIT_WRONG]
    wrong = [key for key in wrong if classify(*key).pending is None]  # type: ignore[union-attr]
    assert not wrong, f"the kit is wrong on {wrong}"


def test_parity_per_benchmark_is_reported(parity, capsys):
    total, agree = Counter(), Counter()
    for case, kit, lmms in parity:
        total[case.spec] += 1
        agree[case.spec] += _agrees(kit, lmms)
    with capsys.disabled():
        print("\nparity with lmms-eval 0.7.3 (cases where both give the same score):")
        for spec in SHARED:
            print(
                f"  {spec:16s} {agree[spec]:3d}/{total[spec]:3d} = {agree[spec] / total[spec]:.0%}"
            )
        print(f"  {'all':16s} {sum(agree.values())}/{sum(total.values())}")
    assert all(agree[spec] > 0 for spec in SHARED)


def test_docs_hold_the_classification_table():
    docs = (ROOT / "docs" / "eval.md").read_text(encoding="utf-8")
    assert markdown_table() in docs, "regenerate docs/eval.md's table: markdown_table()"


@pytest.mark.parametrize("spec_id", sorted(SHARED))
def test_replay_scores_as_the_reward_does(spec_id, tmp_path):
    """``eval --backend replay`` on the answers of the parity cases gives each sample the
    score the parity test compared (one form per sample, different across samples)."""
    task = _task(spec_id)
    reward = TaskReward.from_spec(task.spec)
    lines, expected = [], {}
    for index, sample in enumerate(task.samples):
        forms = list(responses(sample).items())
        _, pred = forms[(index * 5) % len(forms)]
        lines.append(json.dumps({"id": sample.sample_id, "response": pred}))
        expected[sample.sample_id] = reward.score_sample(sample, pred).accuracy
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("\n".join(lines) + "\n")
    run_eval(
        EvalConfig(specs=[SPECS / f"{spec_id}.yaml"], out=tmp_path / "run", backend="replay",
                   predictions=predictions, fixture=True, protocol="official")
    )  # fmt: skip
    records = [json.loads(x) for x in (tmp_path / "run" / f"samples_{spec_id}.jsonl").open()]
    assert {r["sample_id"]: r["accuracy"] for r in records} == expected


if __name__ == "__main__":  # print the docs table
    sys.stdout.write(markdown_table() + "\n")
