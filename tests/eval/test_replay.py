"""Replaying outputs made elsewhere: gold scores 100% on every synthetic spec, a fixed wrong
answer scores what the verifier says, and bad prediction files fail clearly, writing nothing."""

from __future__ import annotations

import json
import statistics

import pytest
from typer.testing import CliRunner

from tests.eval.conftest import SYNTH_SPECS, write_predictions
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.eval.results import load_results
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks
from videorl_kit.rewards.task import TaskReward


def _specs(synth_tree):
    return [synth_tree / "task_specs" / name for name in SYNTH_SPECS]


def test_gold_answers_score_100_percent_on_every_synthetic_spec(synth_tree, tmp_path):
    specs = _specs(synth_tree)
    tasks = load_tasks(specs)
    assert len(tasks) == len(SYNTH_SPECS) >= 17 and all(t.samples for t in tasks)
    predictions = write_predictions(tmp_path / "gold.jsonl", tasks)
    results = run_eval(
        EvalConfig(specs=specs, out=tmp_path / "run", backend="replay", predictions=predictions)
    )
    for task_id, task in results.tasks.items():
        assert task.n_skipped == 0 and task.n_unverifiable == 0, task_id
        assert task.n_scored == task.n_rows
        assert task.metrics[task.primary_metric].value == pytest.approx(1.0), task_id
    assert load_results(tmp_path / "run") == results  # the file validates and round-trips


@pytest.mark.parametrize("spec_name", ["synth-multiple-choice.yaml", "synth-count.yaml",
                                       "synth-regression.yaml", "synth-temporal.yaml"])  # fmt: skip
def test_a_fixed_wrong_answer_scores_what_the_verifier_says(synth_tree, tmp_path, spec_name):
    spec_path = synth_tree / "task_specs" / spec_name
    (task,) = load_tasks([spec_path])
    response = '<think>guess</think><answer>{"time": [0, 1]}</answer>' if "temporal" in spec_name else (
        "<think>guess</think><answer>A</answer>" if "choice" in spec_name else "<answer>7</answer>"
    )  # fmt: skip
    predictions = write_predictions(tmp_path / "fixed.jsonl", [task], response=response)
    results = run_eval(
        EvalConfig(specs=[spec_path], out=tmp_path / "run", backend="replay",
                   predictions=predictions)
    )  # fmt: skip
    reward = TaskReward.from_spec(task.spec)
    expected = [reward.score_sample(s, response) for s in task.samples]
    records = [json.loads(line) for line in (tmp_path / "run" / f"samples_{task.id}.jsonl").open()]
    assert [r["accuracy"] for r in records] == [e.accuracy for e in expected]
    assert [r["overall"] for r in records] == [e.overall for e in expected]
    result = results.tasks[task.id]
    primary = result.metrics[result.primary_metric]
    assert primary.value == pytest.approx(statistics.mean(e.accuracy for e in expected))
    assert result.metrics["overall"].value == pytest.approx(
        statistics.mean(e.overall for e in expected)
    )


@pytest.fixture
def mc_task(synth_tree):
    path = synth_tree / "task_specs" / "synth-multiple-choice.yaml"
    return path, load_tasks([path])[0]


def _lines(task, ids):
    return "".join(json.dumps({"id": i, "response": "<answer>A</answer>"}) + "\n" for i in ids)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("unknown", "1 unknown ids (line 3: 'no-such-sample')"),
        ("duplicate", "1 duplicates (line 3: synth-multiple-choice/"),
        ("missing", "1 samples without a prediction (synth-multiple-choice/"),
        ("malformed", "1 malformed lines: line 2: 'response' must be a string"),
        ("not_json", "1 malformed lines: line 1: invalid JSON"),
    ],
)
def test_bad_prediction_files_fail_naming_the_problem_and_write_nothing(
    mc_task, tmp_path, case, expected
):
    path, task = mc_task
    ids = [s.sample_id for s in task.samples]
    text = {
        "unknown": _lines(task, [*ids, "no-such-sample"]),
        "duplicate": _lines(task, [*ids, ids[0]]),
        "missing": _lines(task, ids[1:]),
        "malformed": _lines(task, ids[:1]) + json.dumps({"id": ids[1], "response": 3}) + "\n",
        "not_json": "{oops\n" + _lines(task, ids),
    }[case]
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(text)
    out = tmp_path / "run"
    with pytest.raises(UserError) as caught:
        run_eval(EvalConfig(specs=[path], out=out, backend="replay", predictions=predictions))
    assert expected in str(caught.value)
    assert str(predictions) in str(caught.value)
    assert not out.exists()


def test_every_problem_is_reported_at_once_and_the_cli_prints_one_line(mc_task, tmp_path):
    path, task = mc_task
    ids = [s.sample_id for s in task.samples]
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(_lines(task, [ids[0], ids[0], "ghost"]))
    result = CliRunner().invoke(
        app, ["eval", str(path), "--backend", "replay", "--predictions", str(predictions),
              "--out", str(tmp_path / "run")],
    )  # fmt: skip
    assert result.exit_code == 1
    message = str(result.exception)
    for part in ("unknown ids", "duplicates", "without a prediction"):
        assert part in message
    assert not (tmp_path / "run").exists()


def test_ids_shared_by_two_tasks_need_a_task_field(synth_tree, tmp_path):
    a = synth_tree / "task_specs" / "synth-count.yaml"
    b = tmp_path / "synth-count-copy.yaml"
    b.write_text(a.read_text().replace("id: synth-count", "id: synth-count-copy")
                 .replace("_base_video.yaml", str(synth_tree / "task_specs" / "_base_video.yaml"))
                 .replace("../data/synth", str(synth_tree / "data" / "synth"))
                 .replace("data:\n", "data:\n  allow_absolute_paths: true\n"
                          f"  media_root: {synth_tree / 'data' / 'synth'}\n"))  # fmt: skip
    tasks = load_tasks([a, b])
    shared = tasks[0].samples[0].sample_id
    assert shared in {s.sample_id for s in tasks[1].samples}
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"id": shared, "response": "1"}) + "\n")
    with pytest.raises(UserError, match='in several tasks, add a "task" field'):
        run_eval(EvalConfig(specs=[a, b], out=tmp_path / "run", backend="replay",
                            predictions=predictions))  # fmt: skip


def test_limit_ignores_predictions_past_the_evaluated_rows(mc_task, tmp_path):
    path, task = mc_task
    predictions = write_predictions(tmp_path / "gold.jsonl", [task])
    results = run_eval(
        EvalConfig(specs=[path], out=tmp_path / "run", backend="replay",
                   predictions=predictions, limit=1)
    )  # fmt: skip
    assert results.tasks[task.id].n_rows == 1 and results.tasks[task.id].n_scored == 1
