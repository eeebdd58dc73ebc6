"""``eval --backend replay --predictions`` reads lmms-eval's ``samples_<task>.jsonl`` logs
(lmms-eval task names are aliases of the kit's specs), a kit run's own samples files, and a
predictions file covering only some of the evaluated benchmarks (the rest are left out, by
name)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.eval.conftest import write_predictions
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.eval.lmms_eval_logs import LMMS_EVAL_ALIASES
from videorl_kit.eval.results import load_results
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks
from videorl_kit.spec import load_spec

SPECS = Path(__file__).resolve().parents[2] / "task_specs" / "eval"
VIDEO_MME = SPECS / "video-mme.yaml"


def _lmms_log(path: Path, entries: list[dict]) -> Path:
    """A log as lmms-eval 0.7.3 writes it: doc popped, resps dropped when equal to
    filtered_resps, one-response lists flattened."""
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def _entries(responses: dict[int, str], targets: dict[int, str]) -> list[dict]:
    return [
        {"doc_id": doc_id, "target": targets[doc_id], "filtered_resps": response,
         "doc_hash": "x", "input": "prompt", "videomme_perception_score": {}}
        for doc_id, response in responses.items()
    ]  # fmt: skip


def _replay(tmp_path: Path, predictions, specs=(VIDEO_MME,), **kwargs):
    return run_eval(
        EvalConfig(specs=list(specs), out=tmp_path / "run", backend="replay",
                   predictions=predictions, fixture=True, protocol="official", **kwargs)
    )  # fmt: skip


def test_an_lmms_eval_log_replays_by_doc_id(tmp_path):
    log = _lmms_log(
        tmp_path / "20260101_120000_samples_videomme.jsonl",
        _entries({0: "B", 1: "The answer is A.", 2: "C"}, {0: "B", 1: "A", 2: "D"}),
    )
    results = _replay(tmp_path, log)
    task = results.tasks["video-mme"]
    assert (task.n_scored, task.metrics["accuracy"].value) == (3, pytest.approx(2 / 3))
    records = [json.loads(x) for x in (tmp_path / "run" / "samples_video-mme.jsonl").open()]
    assert [r["response"] for r in records] == ["B", "The answer is A.", "C"]
    assert results.model.fingerprint_files == [log.name]


def test_the_raw_response_is_graded_when_lmms_eval_logged_one(tmp_path):
    entries = _entries({0: "B", 1: "A", 2: "D"}, {0: "B", 1: "A", 2: "D"})
    entries[0] |= {"resps": [["<think>maybe C</think>B"]], "filtered_resps": ["B"]}
    log = _lmms_log(tmp_path / "samples_videomme.jsonl", entries)
    _replay(tmp_path, log)
    first = json.loads((tmp_path / "run" / "samples_video-mme.jsonl").open().readline())
    assert first["response"] == "<think>maybe C</think>B" and first["accuracy"] == 1.0


def test_a_log_whose_targets_disagree_with_the_rows_is_refused(tmp_path):
    log = _lmms_log(
        tmp_path / "samples_videomme.jsonl",
        _entries({0: "B", 1: "A", 2: "D"}, {0: "C", 1: "A", 2: "D"}),
    )
    with pytest.raises(UserError, match=r"1 lmms-eval docs whose target differs.*doc_id 0 logs "
                       r"target 'C', row 0 has 'B'"):  # fmt: skip
        _replay(tmp_path, log)
    assert not (tmp_path / "run").exists()


def test_an_lmms_eval_task_that_is_no_alias_is_named(tmp_path):
    log = _lmms_log(tmp_path / "samples_mmbench_en.jsonl", _entries({0: "B"}, {0: "B"}))
    with pytest.raises(UserError, match=r"lmms-eval task 'mmbench_en' is no alias of an "
                       "evaluated spec.*videomme"):  # fmt: skip
        _replay(tmp_path, log)


def test_logs_of_a_benchmark_read_from_another_file_say_why_they_cannot_be_matched(tmp_path):
    log = _lmms_log(tmp_path / "samples_mvbench_action_antonym.jsonl", _entries({0: "A"}, {0: "A"}))
    with pytest.raises(UserError, match=r"cannot be matched to mvbench's rows.*3,586-row"):
        _replay(tmp_path, log, specs=[SPECS / "mvbench.yaml"])


def test_a_logged_doc_is_matched_on_the_declared_key(tmp_path):
    (task,) = load_tasks([SPECS / "mvbench.yaml"], fixture=True)
    entries = [
        {"doc_id": 7 + i, "doc": {"problem_id": s.raw["problem_id"]}, "target": "x",
         "filtered_resps": [s.answer]}
        for i, s in enumerate(task.samples)
    ]  # fmt: skip
    log = _lmms_log(tmp_path / "samples_mvbench.jsonl", entries)
    results = _replay(
        tmp_path, log, specs=[SPECS / "mvbench.yaml"],
        overrides=["mvbench:eval.lmms_eval.doc_key=problem_id"],
    )  # fmt: skip
    assert results.tasks["mvbench"].metrics["accuracy"].value == 1.0


def test_a_predictions_file_covering_some_benchmarks_replays_those(tmp_path, capsys):
    log = _lmms_log(
        tmp_path / "samples_videomme.jsonl",
        _entries({0: "B", 1: "A", 2: "D"}, {0: "B", 1: "A", 2: "D"}),
    )
    done = CliRunner().invoke(
        app, ["eval", str(SPECS), "--fixture", "--protocol", "official", "--backend", "replay",
              "--predictions", str(log), "--out", str(tmp_path / "run")],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "replay: no predictions for" in done.output and "mvbench" in done.output
    results = load_results(tmp_path / "run")
    assert list(results.tasks) == ["video-mme"]
    assert "mvbench" in results.run.left_out and len(results.run.left_out) == 21


def test_no_prediction_for_any_task_is_an_error(tmp_path):
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("\n")
    with pytest.raises(UserError, match="no prediction for any evaluated task"):
        _replay(tmp_path, predictions, specs=[SPECS / "mvbench.yaml"])
    predictions.write_text(json.dumps({"task": "video-mme", "id": "001-1", "response": "B"}) + "\n")
    with pytest.raises(UserError, match=r"unknown ids.*task 'video-mme'"):  # not evaluated
        _replay(tmp_path, predictions, specs=[SPECS / "mvbench.yaml"])


def test_a_kit_run_replays_from_its_own_samples_files(tmp_path):
    specs = [VIDEO_MME, SPECS / "lvbench.yaml"]
    tasks = load_tasks(specs, fixture=True, protocol="official")
    first = run_eval(
        EvalConfig(specs=specs, out=tmp_path / "first", backend="replay", fixture=True,
                   predictions=write_predictions(tmp_path / "p.jsonl", tasks, response="B"),
                   protocol="official")
    )  # fmt: skip
    again = run_eval(
        EvalConfig(specs=specs, out=tmp_path / "again", backend="replay", fixture=True,
                   predictions=[tmp_path / "first"], protocol="official")
    )  # fmt: skip
    for task_id, task in first.tasks.items():
        assert again.tasks[task_id].metrics == task.metrics
        assert again.tasks[task_id].samples_sha256 == task.samples_sha256


def _docs_alias_table() -> dict[str, str]:
    """lmms-eval task -> kit spec, as the alias table of docs/eval.md lists them."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "eval.md").read_text()
    start = docs.index("| kit spec | lmms-eval task (alias) |")
    table: dict[str, str] = {}
    for line in docs[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        kit_cell, lmms_cell = line.split("|")[1:3]
        kits = re.findall(r"`([a-z0-9-]+)`", kit_cell)
        if lmms_cell.strip().startswith("none"):  # benchmarks lmms-eval does not have
            continue
        for name in re.findall(r"`([A-Za-z0-9_]+)`", lmms_cell):
            assert len(kits) == 1, f"docs/eval.md: {name!r} sits in a row of several kit specs"
            table[name] = kits[0]
    return table


def test_the_one_alias_table_in_code_is_the_one_in_the_docs():
    assert _docs_alias_table() == dict(LMMS_EVAL_ALIASES)


def test_every_alias_names_a_benchmark_spec_with_an_lmms_eval_section():
    spec_ids = {p.stem for p in SPECS.glob("[a-z]*.yaml")}
    for name, kit_id in LMMS_EVAL_ALIASES.items():
        assert kit_id in spec_ids, f"{name} -> {kit_id}: no task_specs/eval/{kit_id}.yaml"
        assert load_spec(SPECS / f"{kit_id}.yaml").eval.lmms_eval is not None, kit_id
