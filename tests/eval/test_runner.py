"""The run folder: an interrupted run resumes without regenerating, results.json is written
last, another configuration is refused, and bad inputs fail before anything looks complete."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.eval.conftest import ROOT, count_generated, write_predictions
from videorl_kit.core.errors import UserError
from videorl_kit.eval import runner
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks

SPECS = ["synth-count.yaml", "synth-boolean.yaml", "synth-multiple-choice.yaml"]
SHORT = ["eval.generation.max_new_tokens=4"]  # the tiny model's answers: a few tokens suffice


def _setup(synth_tree: Path, tmp_path: Path) -> tuple[list[Path], Path]:
    specs = [synth_tree / "task_specs" / name for name in SPECS]
    return specs, write_predictions(tmp_path / "gold.jsonl", load_tasks(specs))


def test_an_interrupted_run_resumes_without_regenerating_and_matches_a_clean_run(
    synth_tree, tmp_path, monkeypatch
):
    specs, predictions = _setup(synth_tree, tmp_path)
    out = tmp_path / "interrupted"
    settings = {
        "specs": [str(s) for s in specs], "out": str(out), "backend": "replay",
        "predictions": str(predictions), "batch_size": 1, "kill_after": 3,
    }  # fmt: skip
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps(settings))
    killed = subprocess.run(
        [sys.executable, "-m", "tests.eval.interrupt_helper", str(config_file)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not (out / "results.json").exists()  # a half-done run never looks complete
    assert (out / "samples_synth-count.jsonl").exists()  # the first task had finished
    partial = out / "samples_synth-boolean.jsonl.partial"
    assert len(partial.read_text().splitlines()) == 1
    with partial.open("a") as handle:  # a write cut off in the middle of a line
        handle.write('{"task_id": "synth-boolean", "sample_')

    generated = count_generated(monkeypatch)
    resumed = run_eval(
        EvalConfig(specs=specs, out=out, backend="replay", predictions=predictions, batch_size=1)
    )
    assert generated == [
        "synth-boolean/synth-boolean-0001",
        "synth-multiple-choice/synth-multiple-choice-0000",
        "synth-multiple-choice/synth-multiple-choice-0001",
    ]
    assert not partial.exists()

    clean = run_eval(
        EvalConfig(specs=specs, out=tmp_path / "clean", backend="replay",
                   predictions=predictions, batch_size=1)
    )  # fmt: skip
    for task_id, task in clean.tasks.items():
        assert (out / task.samples_file).read_bytes() == (
            tmp_path / "clean" / task.samples_file
        ).read_bytes()
        assert resumed.tasks[task_id].metrics == task.metrics
        assert resumed.tasks[task_id].samples_sha256 == task.samples_sha256


def test_a_finished_run_is_not_generated_again(synth_tree, tmp_path, monkeypatch):
    specs, predictions = _setup(synth_tree, tmp_path)
    config = EvalConfig(
        specs=specs, out=tmp_path / "run", backend="replay", predictions=predictions
    )
    first = run_eval(config)
    generated = count_generated(monkeypatch)
    second = run_eval(config)
    assert generated == []
    assert second.tasks == first.tasks


def test_a_folder_holding_another_configuration_or_other_files_is_refused(synth_tree, tmp_path):
    specs, predictions = _setup(synth_tree, tmp_path)
    out = tmp_path / "run"
    run_eval(EvalConfig(specs=specs, out=out, backend="replay", predictions=predictions))
    with pytest.raises(UserError, match=r"another configuration \(differs in: seed\)"):
        run_eval(
            EvalConfig(specs=specs, out=out, backend="replay", predictions=predictions, seed=1)
        )
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="not empty and is not an eval run folder"):
        run_eval(EvalConfig(specs=specs, out=other, backend="replay", predictions=predictions))


def test_a_missing_media_root_is_named_before_anything_is_written(synth_tree, tmp_path, tiny_model):
    spec = synth_tree / "task_specs" / "synth-count.yaml"
    out = tmp_path / "run"
    with pytest.raises(UserError) as caught:
        run_eval(
            EvalConfig(specs=[spec], out=out, model=str(tiny_model), store=tmp_path / "store",
                       overrides=["synth-count:data.media_root=/no/such/videos"])
        )  # fmt: skip
    message = str(caught.value)
    assert "synth-count: media root /no/such/videos does not exist" in message
    assert "--set synth-count:data.media_root=DIR" in message
    assert not out.exists() and not (tmp_path / "store").exists()


def test_a_budget_for_another_patch_size_is_refused_with_the_fix(synth_tree, tmp_path, tiny_model):
    specs = [synth_tree / "task_specs" / name for name in SPECS]
    with pytest.raises(UserError) as caught:
        run_eval(
            EvalConfig(specs=specs, out=tmp_path / "run", model=str(tiny_model),
                       overrides=["budget.video.patch=32", "budget.image.patch=32"])
        )  # fmt: skip
    assert str(caught.value) == (  # one fix for every spec that needs it
        "synth-count, synth-boolean, synth-multiple-choice: budget.video.patch is 32 but the "
        "model's vision tower expects 28; add --set budget.video.patch=28"
    )
    assert not (tmp_path / "run").exists()


def test_a_model_path_that_is_not_a_vlm_is_named(synth_tree, tmp_path):
    from transformers import GPT2Config

    spec = synth_tree / "task_specs" / "synth-count.yaml"
    text_only = tmp_path / "gpt2"
    GPT2Config(n_layer=1, n_embd=8, n_head=2).save_pretrained(text_only)
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = {
        str(text_only): "not a vision-language model (model_type 'gpt2' has no vision_config)",
        str(tmp_path / "nowhere"): "no such folder",
        str(spec): "not a folder",
        str(empty): "no config.json, not a model folder",
    }
    for model, expected in cases.items():
        with pytest.raises(UserError, match=re.escape(expected)):
            run_eval(EvalConfig(specs=[spec], out=tmp_path / "run", model=model))
        assert not (tmp_path / "run").exists()


def test_the_cli_prints_one_line_and_exits_1(synth_tree, tmp_path):
    spec = synth_tree / "task_specs" / "synth-count.yaml"
    result = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "eval", str(spec), "--model", str(tmp_path / "x"),
         "--out", str(tmp_path / "run")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith("error: --model ")
        and "Traceback" not in result.stderr
    )


def test_a_missing_annotation_file_and_a_changed_one_are_named(tmp_path):
    spec = ROOT / "task_specs" / "eval" / "video-holmes.yaml"
    with pytest.raises(UserError, match=r"video-holmes: annotation file .*holmes.json not found"):
        load_tasks([spec])
    changed = tmp_path / "holmes.json"
    changed.write_text("[]")
    with pytest.raises(UserError, match=r"has sha256 .* but the spec pins f59aba275ef0"):
        load_tasks([spec], overrides=[f"video-holmes:data.path={changed}"])
    (task,) = load_tasks(
        [spec], overrides=[f"video-holmes:data.path={changed}", "eval.source.sha256=null"]
    )
    assert task.n_rows == 0 and task.data.declared_sha256 is None


@pytest.mark.parametrize("batch_size", [1, 4])
def test_a_sample_the_model_cannot_take_is_skipped_by_name(
    synth_tree, tmp_path, monkeypatch, batch_size
):
    specs, predictions = _setup(synth_tree, tmp_path)
    make_backend = runner.make_backend

    def failing(config, tasks):
        backend = make_backend(config, tasks)
        generate = backend.generate

        def generate_or_fail(requests):
            if any(r.sample_id == "synth-boolean-0001" for r in requests):
                raise RuntimeError("CUDA out of memory (pretend)")
            return generate(requests)

        backend.generate = generate_or_fail
        return backend

    monkeypatch.setattr(runner, "make_backend", failing)
    results = run_eval(
        EvalConfig(specs=specs, out=tmp_path / "run", backend="replay", predictions=predictions,
                   batch_size=batch_size)
    )  # fmt: skip
    boolean = results.tasks["synth-boolean"]
    assert (boolean.n_rows, boolean.n_scored, boolean.n_skipped) == (2, 1, 1)
    assert boolean.skipped[0].sample_id == "synth-boolean-0001"
    assert (
        boolean.skipped[0].reason == "generation_error: RuntimeError: CUDA out of memory (pretend)"
    )
    assert results.tasks["synth-count"].n_scored == 2  # the rest of the run went on


def test_a_model_that_does_not_load_stops_the_run_and_its_folder_stays_usable(
    synth_tree, tmp_path, tiny_model
):
    """Damaged weights are a bad --model, not one bad sample: the run stops with one line, no
    results.json claims a finished run, and the same --out then takes the repaired model."""
    import shutil

    spec = synth_tree / "task_specs" / "synth-count.yaml"
    damaged = tmp_path / "damaged"
    shutil.copytree(tiny_model, damaged)
    (damaged / "model.safetensors").write_bytes(b"\x00" * 4096)
    out, store = tmp_path / "run", tmp_path / "store"
    settings = {"specs": [spec], "out": out, "store": store, "overrides": SHORT}
    with pytest.raises(UserError, match=r"--model .*damaged: cannot load: "):
        run_eval(EvalConfig(model=str(damaged), **settings))
    assert sorted(p.name for p in out.iterdir()) == ["run.json"]
    results = run_eval(EvalConfig(model=str(tiny_model), **settings))
    assert results.tasks["synth-count"].n_scored == 2
    (damaged / "model.safetensors").unlink()
    with pytest.raises(UserError, match=r"--model .*damaged: no weights \(\*\.safetensors"):
        run_eval(EvalConfig(model=str(damaged), specs=[spec], out=tmp_path / "other"))
    assert not (tmp_path / "other").exists()


def test_out_pointing_at_a_file_is_named(synth_tree, tmp_path):
    specs, predictions = _setup(synth_tree, tmp_path)
    a_file = tmp_path / "results.txt"
    a_file.write_text("mine")
    with pytest.raises(UserError, match=r"--out .*results\.txt is a file; give a folder"):
        run_eval(EvalConfig(specs=specs, out=a_file, backend="replay", predictions=predictions))
    assert a_file.read_text() == "mine"
