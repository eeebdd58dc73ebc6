"""Judge-graded questions: a spec's ``eval.judge`` grades them with a local model run greedy
through the kit's backends, every judgement and its prompt kept in the samples file and
replayed from there; without a judge they are reported as not scored, never as 0. On the CPU
with the tiny random model: its judgements are meaningless, the path is what is tested."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.eval.conftest import write_predictions
from videorl_kit.core.errors import UserError
from videorl_kit.eval.report import render_report
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks

VCR = Path(__file__).resolve().parents[2] / "task_specs" / "eval" / "vcr-bench.yaml"
SHORT = ["vcr-bench:eval.judge.max_new_tokens=8"]


def _gold(tmp_path: Path) -> Path:
    tasks = load_tasks([VCR], fixture=True, protocol="official")
    return write_predictions(tmp_path / "gold.jsonl", tasks)


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "samples_vcr-bench.jsonl").open()]


def _run(tmp_path: Path, name: str, predictions, **kwargs):
    return run_eval(
        EvalConfig(specs=[VCR], out=tmp_path / name, backend="replay", predictions=predictions,
                   fixture=True, protocol="official", overrides=SHORT, **kwargs)
    )  # fmt: skip


def test_without_a_judge_judged_questions_are_not_scored_never_zero(tmp_path):
    results = _run(tmp_path, "run", _gold(tmp_path))
    task = results.tasks["vcr-bench"]
    assert (task.n_rows, task.n_scored, task.n_unscored) == (3, 1, 2)
    assert task.metrics["accuracy"].value == 1.0 and task.metrics["accuracy"].n == 1
    assert task.judge["model"] is None and task.judge["n_unscored"] == 2
    records = _records(tmp_path / "run")
    unscored = [r for r in records if r["status"] == "unscored"]
    assert [r["problem_type"] for r in unscored] == ["open_ended", "open_ended"]
    assert all(r["details"]["rule_accuracy"] == 1.0 for r in unscored)  # the rule said 1
    report = render_report([tmp_path / "run"], tmp_path / "report").read_text()
    assert "2 judge-graded without a judgement" in report


def test_the_reasoning_protocol_grades_open_answers_by_rule(tmp_path):
    tasks = load_tasks([VCR], fixture=True)
    results = run_eval(
        EvalConfig(specs=[VCR], out=tmp_path / "r", backend="replay", fixture=True,
                   predictions=write_predictions(tmp_path / "g.jsonl", tasks))
    )  # fmt: skip
    assert results.tasks["vcr-bench"].n_scored == 3 and results.tasks["vcr-bench"].judge is None


@pytest.fixture(scope="module")
def judged(tmp_path_factory, tiny_model):
    tmp_path = tmp_path_factory.mktemp("judged")
    results = _run(tmp_path, "run", _gold(tmp_path), judge_model=str(tiny_model))
    return tmp_path / "run", results


def test_a_declared_judge_grades_and_its_judgements_are_stored(judged, tiny_model):
    run, results = judged
    task = results.tasks["vcr-bench"]
    assert task.judge["model"] == str(Path(tiny_model).resolve())
    assert task.judge["n_judged"] == 2 and task.judge["n_replayed"] == 0
    open_ended = [r for r in _records(run) if r["problem_type"] == "open_ended"]
    for record in open_ended:
        block = record["judge"]
        assert "Ground Truth: " + record["target"] in block["prompt"]
        assert "Model Answer: " + record["target"] in block["prompt"]  # the gold replayed
        assert isinstance(block["output"], str) and block["fingerprint"]
        assert record["status"] == ("unscored" if block["verdict"] is None else "ok")
    assert task.n_scored + task.n_unscored == 3


def test_the_judge_is_greedy_and_deterministic(judged, tiny_model, tmp_path):
    run, _ = judged
    again = _run(tmp_path, "again", _gold(tmp_path), judge_model=str(tiny_model))
    assert again.tasks["vcr-bench"].samples_sha256 == _sha(run)
    assert [r.get("judge", {}).get("output") for r in _records(tmp_path / "again")] == [
        r.get("judge", {}).get("output") for r in _records(run)
    ]


def _sha(run: Path) -> str:
    from videorl_kit.media.hashing import file_content_hash

    return file_content_hash(run / "samples_vcr-bench.jsonl")


def test_stored_judgements_of_the_same_judge_replay_without_running_it(
    judged, tiny_model, tmp_path
):
    """The judge model is named (fingerprinted, never run): its own judgements are reused."""
    run, first = judged
    replayed = _run(
        tmp_path, "replayed", [run / "samples_vcr-bench.jsonl"], judge_model=str(tiny_model)
    )
    task = replayed.tasks["vcr-bench"]
    assert task.judge["n_replayed"] == 2 and task.judge["n_judged"] == 0
    assert task.judge["n_stored_not_reused"] == 0
    assert task.metrics == first.tasks["vcr-bench"].metrics
    for old, new in zip(_records(run), _records(tmp_path / "replayed"), strict=True):
        assert new["status"] == old["status"] and new["accuracy"] == old["accuracy"]
        if old.get("judge"):
            assert new["judge"]["output"] == old["judge"]["output"]
            assert new["judge"]["replayed"] is True


def test_stored_judgements_without_a_judge_are_not_used(judged, tmp_path):
    """Nothing to check a stored judgement against: not scored, counted, named, reported."""
    run, _ = judged
    replayed = _run(tmp_path, "replayed", [run / "samples_vcr-bench.jsonl"])
    task = replayed.tasks["vcr-bench"]
    assert task.n_unscored == 2 and task.judge["n_replayed"] == 0
    assert task.judge["n_stored_not_reused"] == 2
    for record in _records(tmp_path / "replayed"):
        if record["problem_type"] == "open_ended":
            assert record["status"] == "unscored" and record["accuracy"] == 0.0
            assert "no judge model" in record["details"]["stored_judgement"]
            assert "judgement in the predictions file is not used" in record["details"]["unscored"]
    report = render_report([tmp_path / "replayed"], tmp_path / "report").read_text()
    assert "2 judgements in the replayed predictions not reused" in report


def _forge(run: Path, path: Path, **changes) -> Path:
    """``run``'s samples file with every stored judgement saying 'Judgement: 1' (and changes)."""
    lines = []
    for record in _records(run):
        if record.get("judge"):
            record["response"] = "<answer>I have no idea</answer>"
            block = record["judge"]
            block["prompt"] = block["prompt"].replace(
                "Model Answer: " + record["target"], "Model Answer: I have no idea"
            )
            block.update(output="Judgement: 1", verdict=1.0, **changes)
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_forged_judgements_of_another_judge_are_judged_again(judged, tiny_model, tmp_path):
    """A made-up fingerprint (or verdict rule) is not this run's judge: the judge runs."""
    run, _ = judged
    for name, changes in (("fp", {"fingerprint": "f" * 64}), ("rule", {"verdict_rule": "x"})):
        forged = _forge(run, tmp_path / f"samples_{name}.jsonl", **changes)
        again = _run(tmp_path, name, [forged], judge_model=str(tiny_model))
        task = again.tasks["vcr-bench"]
        assert task.judge["n_judged"] == 2 and task.judge["n_replayed"] == 0, name
        assert task.judge["n_stored_not_reused"] == 2, name
        for record in _records(tmp_path / name):
            if record["problem_type"] == "open_ended":
                assert record["judge"]["output"] != "Judgement: 1", name
                assert "stored_judgement" in record["details"], name


def test_rejudge_reuses_no_stored_judgement(judged, tiny_model, tmp_path):
    """A forged verdict with the right fingerprint still holds no weight under --rejudge,
    and the verdict is always read from the output, never from the stored 'verdict'."""
    run, _ = judged
    forged = _forge(run, tmp_path / "samples_same.jsonl")  # this judge's fingerprint kept
    again = _run(tmp_path, "rejudged", [forged], judge_model=str(tiny_model), rejudge=True)
    assert again.tasks["vcr-bench"].judge["n_judged"] == 2
    assert again.tasks["vcr-bench"].judge["n_replayed"] == 0
    lying = _forge(run, tmp_path / "samples_lying.jsonl")
    text = lying.read_text().replace('"output": "Judgement: 1"', '"output": "Judgement: 0"')
    lying.write_text(text)
    kept = _run(tmp_path, "lying", [lying], judge_model=str(tiny_model))
    assert kept.tasks["vcr-bench"].judge["n_replayed"] == 2
    for record in _records(tmp_path / "lying"):
        if record["problem_type"] == "open_ended":
            assert record["judge"]["replayed"] is True and record["accuracy"] == 0.0


def test_bad_vllm_judge_engine_arguments_name_the_spec_and_field(tmp_path, tiny_model):
    bad = [*SHORT, "vcr-bench:eval.judge.backend=vllm", "vcr-bench:eval.judge.model_args=tp=2"]
    with pytest.raises(UserError, match=r"vcr-bench\.yaml: eval\.judge\.model_args: .*'tp'"):
        run_eval(
            EvalConfig(specs=[VCR], out=tmp_path / "bad", backend="replay",
                       predictions=_gold(tmp_path), fixture=True, protocol="official",
                       overrides=bad, judge_model=str(tiny_model))
        )  # fmt: skip
