"""Reports: report.md and PNG charts for one or more runs, deltas against the first run and
whether they exceed their standard error; results.json is a strict, validated contract."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from tests.eval.conftest import ROOT, write_predictions
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.eval.report import render_report
from videorl_kit.eval.results import load_results
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks

SPECS = [ROOT / "task_specs" / "eval" / name for name in ("video-mme.yaml", "ovo-bench.yaml")]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The fixtures of two benchmarks, answered with the gold and with a constant 'A'."""
    root = tmp_path_factory.mktemp("report")
    tasks = load_tasks(SPECS, fixture=True)
    gold = write_predictions(root / "gold.jsonl", tasks)
    wrong = write_predictions(root / "wrong.jsonl", tasks, response="<answer>A</answer>")
    for name, predictions in (("gold", gold), ("wrong", wrong)):
        run_eval(
            EvalConfig(specs=SPECS, out=root / name, backend="replay",
                       predictions=predictions, fixture=True)
        )  # fmt: skip
    return root


def test_report_renders_scores_categories_and_charts(two_runs, tmp_path):
    path = render_report([two_runs / "gold", two_runs / "wrong"], tmp_path / "report")
    text = path.read_text()
    assert "| General | Video-MME | accuracy | 100.0 ± 0.0 |" in text
    wrong = load_results(two_runs / "wrong").tasks["video-mme"].metrics["accuracy"]
    delta = f"{100 * (wrong.value - 1.0):+.1f}"
    assert f"| {delta} | yes |" in text  # 100% vs a third: far beyond one standard error
    assert "### By `duration`" in text and "### By `ovo_task`" in text
    for png in [
        tmp_path / "report" / "scores.png",
        *(tmp_path / "report").glob("categories_*.png"),
    ]:
        assert png.read_bytes().startswith(PNG), png
    assert (tmp_path / "report" / "categories_video-mme_task_type.png").exists()
    assert "Δ vs gold" in text and "fixture" in text
    assert (tmp_path / "report" / "deltas.png").read_bytes().startswith(PNG)
    assert "![deltas](deltas.png)" in text


def test_one_run_reports_without_deltas(two_runs, tmp_path):
    text = render_report([two_runs / "gold"], tmp_path / "single").read_text()
    assert "Δ vs" not in text and "OVO-Bench" in text
    assert not (tmp_path / "single" / "deltas.png").exists()


def test_the_report_command(two_runs, tmp_path):
    result = CliRunner().invoke(
        app, ["report", str(two_runs / "gold"), str(two_runs / "wrong"), "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(tmp_path / "report.md")


def test_results_json_is_validated_strictly(two_runs, tmp_path):
    results = json.loads((two_runs / "gold" / "results.json").read_text())
    results["tasks"]["video-mme"]["metrics"]["accuracy"]["surprise"] = 1
    (tmp_path / "results.json").write_text(json.dumps(results))
    with pytest.raises(UserError, match=r"tasks.video-mme.metrics.accuracy.surprise: Extra inputs"):
        load_results(tmp_path)
    with pytest.raises(UserError, match=r"no results\.json"):
        render_report([tmp_path / "nothing-here"], tmp_path / "out")


_NOT_A_SCORE = [
    (("metrics", "accuracy", "value"), "NaN", "finite number"),
    (("metrics", "accuracy", "value"), "Infinity", "finite number"),
    (("metrics", "accuracy", "value"), "-Infinity", "finite number"),
    (("metrics", "accuracy", "value"), '"0.9"', "valid number"),
    (("metrics", "accuracy", "value"), "true", "valid number"),
    (("metrics", "accuracy", "stderr"), "-0.5", "greater than or equal to 0"),
    (("metrics", "accuracy", "stderr"), "NaN", "finite number"),
    (("metrics", "accuracy", "n"), "true", "valid integer"),
    (("metrics", "accuracy", "n"), "3.5", "valid integer"),
    (("categories", "duration", 0, "score"), '"1"', "valid number"),
    (("categories", "duration", 0, "stderr"), "-1e-9", "greater than or equal to 0"),
    (("n_scored",), "false", "valid integer"),
]


@pytest.mark.parametrize(("where", "raw", "message"), _NOT_A_SCORE)
def test_a_value_that_is_not_a_finite_number_is_refused(two_runs, tmp_path, where, raw, message):
    """NaN, infinities, numeric strings, booleans and negative standard errors are refused
    with one line naming the file, task and field; nothing reaches the report."""
    results = json.loads((two_runs / "gold" / "results.json").read_text())
    node = results["tasks"]["video-mme"]
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = "@@RAW@@"
    text = json.dumps(results).replace('"@@RAW@@"', raw)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text(text)
    field = ".".join(str(k) for k in ("tasks", "video-mme", *where))
    with pytest.raises(UserError, match=re.escape(f"{field}: ") + f".*{message}") as raised:
        render_report([tmp_path / "run"], tmp_path / "out")
    assert "results.json" in str(raised.value) and "\n" not in str(raised.value)
    assert not (tmp_path / "out" / "report.md").exists()
    result = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--out", str(tmp_path)])
    assert result.exit_code == 1


def test_no_number_field_of_the_run_takes_infinity(two_runs, tmp_path):
    text = (two_runs / "gold" / "results.json").read_text()
    results = json.loads(text)
    results["run"]["seconds"] = "@@RAW@@"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text(
        json.dumps(results).replace('"@@RAW@@"', "Infinity")
    )
    with pytest.raises(UserError, match=r"results\.json: run\.seconds: .*finite number"):
        load_results(tmp_path / "run")


def test_null_scores_stay_valid(two_runs, tmp_path):
    """A metric nothing was scored for (value null) and a one-video stderr (null) are kept."""
    results = json.loads((two_runs / "gold" / "results.json").read_text())
    metric = results["tasks"]["video-mme"]["metrics"]["accuracy"]
    metric.update(value=None, stderr=None, n=0)
    results["tasks"]["video-mme"]["categories"]["duration"][0].update(score=None, stderr=None)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text(json.dumps(results))
    loaded = load_results(tmp_path / "run").tasks["video-mme"]
    assert loaded.metrics["accuracy"].value is None
    text = render_report([tmp_path / "run"], tmp_path / "out").read_text()
    assert "Video-MME" in text


def test_bad_report_inputs_fail_in_one_line_naming_the_file(two_runs, tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    with pytest.raises(UserError, match=r"--out .*notes\.txt is a file"):
        render_report([two_runs / "gold"], a_file)
    assert a_file.read_text() == "mine"
    (tmp_path / "torn").mkdir()
    (tmp_path / "torn" / "results.json").write_text('{"schema_version": 1, "run": {')
    with pytest.raises(UserError, match=r"torn/results\.json: Invalid JSON: EOF"):
        render_report([tmp_path / "torn"], tmp_path / "out")


def test_runs_are_compared_on_the_same_headline_metric(tmp_path):
    """A later run whose spec names another primary metric is still shown (and its delta
    taken) on the first run's headline metric; the spec difference is flagged."""
    spec = ROOT / "task_specs" / "eval" / "vsi-bench.yaml"
    (task,) = load_tasks([spec], fixture=True)
    predictions = write_predictions(tmp_path / "a.jsonl", [task], response="<answer>A</answer>")
    settings = {"specs": [spec], "backend": "replay", "predictions": predictions, "fixture": True}
    run_eval(EvalConfig(out=tmp_path / "macro", **settings))
    other = run_eval(
        EvalConfig(out=tmp_path / "mra", overrides=["eval.metrics.primary=mra"], **settings)
    )
    metrics = other.tasks["vsi-bench"].metrics
    assert metrics["mra"].value != metrics["macro"].value
    text = render_report([tmp_path / "macro", tmp_path / "mra"], tmp_path / "report").read_text()
    macro = f"{100 * metrics['macro'].value:.1f}"
    assert f"| Spatial | VSI-Bench | macro | {macro} | {macro} | +0.0 | n/a |" in text
    assert "vsi-bench: runs differ in spec_sha256" in text
