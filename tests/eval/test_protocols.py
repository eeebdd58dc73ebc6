"""Two protocols per benchmark: the reasoning protocol (the spec as written) and the
benchmark's official one (its prompt, answer format, generation length and frames, with the
files they come from), named in results.json and kept apart by ``report``; and the headline
metrics as the benchmarks define them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.eval.conftest import write_predictions
from tests.eval.fixture_media import EVAL_SPECS
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.eval.metrics import task_metrics
from videorl_kit.eval.records import SampleRecord
from videorl_kit.eval.report import render_report
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks
from videorl_kit.rewards.task import TaskReward
from videorl_kit.spec import SpecError, load_spec
from videorl_kit.spec.eval_section import MetricsSpec
from videorl_kit.spec.protocols import ProtocolError, apply_protocol

SPECS = Path(__file__).resolve().parents[2] / "task_specs" / "eval"
IDS = [p.stem for p in EVAL_SPECS]
CITES_A_VERSION = re.compile(r"\b[0-9a-f]{40}\b|lmms-eval 0\.7\.3")


@pytest.mark.parametrize("path", EVAL_SPECS, ids=IDS)
def test_every_benchmark_offers_an_official_protocol_that_cites_its_source(path):
    spec = load_spec(path)
    official = spec.eval.protocols["official"]
    assert CITES_A_VERSION.search(official.source), "cite the commit or release read"
    assert re.search(r"\.(py|yaml|sh)\b|_yaml\b", official.source), "cite the file(s) read"
    merged = apply_protocol(spec, "official")
    assert merged.eval.protocol == "official" and not merged.eval.protocols
    assert merged.prompt.template != spec.prompt.template
    assert "<think>" not in merged.prompt.template  # the official protocols ask for no reasoning
    assert merged.eval.generation.max_new_tokens <= spec.eval.generation.max_new_tokens * 2
    assert merged.reward.format == "none" and merged.reward.weights.accuracy == 1.0


def test_official_protocol_merges_over_the_spec_and_reasoning_keeps_it():
    spec = load_spec(SPECS / "video-mme.yaml")
    official = apply_protocol(spec, "official")
    assert official.eval.generation.max_new_tokens == 16
    assert official.eval.generation.temperature == 0.0
    video = official.budget.video
    assert (video.min_frames, video.max_frames, video.max_pixels) == (32, 32, 602112)
    assert official.budget.video.patch == spec.budget.video.patch  # merged, not replaced
    assert official.data == spec.data and official.verifier == spec.verifier
    reasoning = apply_protocol(spec, "reasoning")
    assert reasoning.prompt == spec.prompt and reasoning.budget == spec.budget
    assert reasoning.eval.protocol == "reasoning" and not reasoning.eval.protocols


def test_a_spec_without_an_official_protocol_is_refused_by_name(synth_tree):
    spec = load_spec(synth_tree / "task_specs" / "synth-count.yaml")
    with pytest.raises(ProtocolError, match=r"declares no eval.protocols.official"):
        apply_protocol(spec, "official")
    with pytest.raises(ProtocolError, match="unknown protocol 'chatty'"):
        apply_protocol(spec, "chatty")


def test_a_broken_official_protocol_is_reported_at_its_line(tmp_path):
    root = tmp_path / "task_specs" / "eval"  # data paths stay inside the copy's root
    shutil.copytree(SPECS, root, ignore=shutil.ignore_patterns("fixtures"))
    (tmp_path / "pyproject.toml").touch()
    text = (root / "lvbench.yaml").read_text()
    broken = text.replace("generation: {max_new_tokens: 16}", "generation: {max_new_tokens: 0}")
    broken = broken.replace("Answer the question with the option letter''", "x")
    lines = broken.splitlines()
    (root / "lvbench.yaml").write_text(broken)
    with pytest.raises(SpecError) as caught:
        load_spec(root / "lvbench.yaml")
    issue = caught.value.issues[0]
    assert issue.path == "eval.protocols.official.generation.max_new_tokens"
    assert "max_new_tokens: 0" in lines[issue.line - 1]
    bad_template = text.replace("Question:", "{{ question").replace("{{ question }}\n", "{{ q\n", 1)
    (root / "lvbench.yaml").write_text(bad_template)
    with pytest.raises(SpecError, match=r"eval\.protocols\.official\.prompt\.template"):
        load_spec(root / "lvbench.yaml")


def test_results_and_samples_name_the_protocol_and_use_its_settings(tmp_path):
    path = SPECS / "lvbench.yaml"
    (task,) = load_tasks([path], fixture=True, protocol="official")
    predictions = write_predictions(tmp_path / "p.jsonl", [task], response="D")
    results = run_eval(
        EvalConfig(specs=[path], out=tmp_path / "run", backend="replay", predictions=predictions,
                   fixture=True, protocol="official")
    )  # fmt: skip
    result = results.tasks["lvbench"]
    assert results.run.protocol == "official" and result.protocol == "official"
    assert result.generation["max_new_tokens"] == 16 and result.budget["video"]["max_frames"] == 32
    assert result.spec["eval"]["protocol"] == "official"
    record = json.loads((tmp_path / "run" / "samples_lvbench.jsonl").open().readline())
    assert record["prompt"].endswith("Answer the question with the option letter")
    assert record["format"] == 1.0 and record["overall"] == record["accuracy"]  # bare answers
    with pytest.raises(UserError, match=r"another configuration|different configuration|holds"):
        run_eval(EvalConfig(specs=[path], out=tmp_path / "run", backend="replay",
                            predictions=predictions, fixture=True))  # fmt: skip


def _run(tmp_path: Path, name: str, protocol: str, response: str) -> Path:
    path = SPECS / "video-mme.yaml"
    (task,) = load_tasks([path], fixture=True, protocol=protocol)
    predictions = write_predictions(tmp_path / f"{name}.jsonl", [task], response=response)
    out = tmp_path / name
    run_eval(EvalConfig(specs=[path], out=out, backend="replay", predictions=predictions,
                        fixture=True, protocol=protocol))  # fmt: skip
    return out


def test_report_refuses_deltas_across_protocols_unless_allowed(tmp_path):
    reasoning = _run(tmp_path, "r", "reasoning", "<answer>B</answer>")
    official = _run(tmp_path, "o", "official", "B")
    with pytest.raises(UserError, match=r"different protocols.*video-mme: reasoning \(r\) vs "
                       r"official \(o\).*--allow-mixed"):  # fmt: skip
        render_report([reasoning, official], tmp_path / "report")
    assert not (tmp_path / "report" / "report.md").exists()
    report = render_report([reasoning, official], tmp_path / "report", allow_mixed=True)
    text = report.read_text()
    assert "deltas across protocols (--allow-mixed): video-mme" in text
    assert "| r | reasoning |" in text and "| o | official |" in text
    same = _run(tmp_path, "o2", "official", "A")
    assert render_report([official, same], tmp_path / "ok").is_file()  # like for like


def test_cli_takes_protocol_and_allow_mixed(tmp_path):
    path = SPECS / "video-mme.yaml"
    (task,) = load_tasks([path], fixture=True, protocol="official")
    predictions = write_predictions(tmp_path / "p.jsonl", [task], response="B")
    runner = CliRunner()
    done = runner.invoke(app, ["eval", str(path), "--fixture", "--backend", "replay",
                               "--predictions", str(predictions), "--protocol", "official",
                               "--out", str(tmp_path / "o")])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "official" in done.output
    reasoning = _run(tmp_path, "r", "reasoning", "<answer>B</answer>")
    refused = runner.invoke(app, ["report", str(reasoning), str(tmp_path / "o"),
                                  "--out", str(tmp_path / "rep")])  # fmt: skip
    assert refused.exit_code == 1 and "--allow-mixed" in str(refused.exception)
    allowed = runner.invoke(app, ["report", str(reasoning), str(tmp_path / "o"),
                                  "--out", str(tmp_path / "rep"), "--allow-mixed"])  # fmt: skip
    assert allowed.exit_code == 0, allowed.output


# -- headline metrics as the benchmarks define them -------------------------------------------


def _record(sample_id: str, kind: str, score: float) -> SampleRecord:
    return SampleRecord(
        task_id="vsi", sample_id=sample_id, row_index=0, problem_type="multiple_choice",
        doc_hash="d", prompt_hash="p", target_hash="t", response_hash="r", prompt="?",
        target="A", response="A", accuracy=score, format=1, overall=score, status="ok",
        cluster=sample_id, categories={"original_question_type": kind},
    )  # fmt: skip


def test_vsi_bench_overall_averages_the_three_rel_direction_types_into_one():
    spec = load_spec(SPECS / "vsi-bench.yaml").eval.metrics
    scores = {"object_rel_direction_easy": 1.0, "object_rel_direction_medium": 0.0,
              "object_rel_direction_hard": 0.0, "object_counting": 1.0, "route_planning": 0.0}  # fmt: skip
    records = [_record(f"{k}-{i}", k, v) for i, (k, v) in enumerate(scores.items())]
    metrics = task_metrics(records, spec).metrics
    # official: mean(rel_direction = 1/3, counting 1, route 0) over 3 reported types
    assert metrics["macro"].value == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert metrics["macro_unmerged"].value == pytest.approx(2 / 5)  # the 10-type macro
    assert task_metrics(records, spec).primary == "macro"
    plain = task_metrics(records, MetricsSpec(macro_over=["original_question_type"]))
    assert "macro_unmerged" not in plain.metrics


def test_mvbench_reports_its_subtasks():
    (task,) = load_tasks([SPECS / "mvbench.yaml"], fixture=True)
    from videorl_kit.eval.task_run import _categories

    assert [_categories(task, s)["subtask"] for s in task.samples] == [
        "action_antonym", "moving_direction", "action_count",
    ]  # fmt: skip


def test_tempcompass_answers_giving_only_the_option_text_are_graded():
    (task,) = load_tasks([SPECS / "tempcompass.yaml"], fixture=True, protocol="official")
    reward = TaskReward.from_spec(task.spec)
    first = task.samples[0]
    assert first.options == ["A. left", "B. right"] and first.question.endswith("moving?")
    assert reward.score_sample(first, "right").accuracy == 1.0
    assert reward.score_sample(first, "left").accuracy == 0.0


def test_mmvu_is_named_as_its_multiple_choice_subset():
    spec = load_spec(SPECS / "mmvu-mc.yaml")
    assert spec.id == "mmvu-mc" and "MC" in spec.eval.benchmark
    assert not (SPECS / "mmvu.yaml").exists()


def test_longvideobench_reads_a_pinned_file():
    spec = load_spec(SPECS / "longvideobench.yaml")
    assert spec.data.hub is None and spec.eval.source.sha256 is not None
    assert re.search(r"@[0-9a-f]{40}/", spec.eval.source.origin)


def test_charades_start_and_end_time_lines_are_read_as_the_interval(tmp_path):
    path = SPECS / "charades-sta.yaml"
    (task,) = load_tasks([path], fixture=True, protocol="official")
    lines = []
    for sample in task.samples:
        start, end = json.loads(sample.answer)["time"]
        response = f"Start time: {start:g} seconds\nEnd time: {end:g} seconds"
        lines.append(json.dumps({"id": sample.sample_id, "response": response}))
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("\n".join(lines) + "\n")
    results = run_eval(EvalConfig(specs=[path], out=tmp_path / "run", backend="replay",
                                  predictions=predictions, fixture=True, protocol="official"))  # fmt: skip
    assert results.tasks["charades-sta"].metrics["miou"].value == pytest.approx(1.0, abs=1e-3)
