"""Fixtures for the eval tests: the synthetic suite with the demo specs, a tiny model, helpers."""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import pytest

from videorl_kit.eval.requests import GenerationRequest
from videorl_kit.eval.tasks import EvalTask
from videorl_kit.spec.data import Sample

ROOT = Path(__file__).resolve().parents[2]
SYNTH_SPECS = sorted(p.name for p in (ROOT / "task_specs").glob("synth-*.yaml"))


@pytest.fixture(scope="session")
def synth_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ``data/synth`` (two rows per task) and a copy of the demo specs in
    ``task_specs/`` (their relative data paths resolve to that suite)."""
    from videorl_kit.synth import generate_suite

    root = tmp_path_factory.mktemp("synth_tree")
    generate_suite(root / "data" / "synth", n_per_task=2, seed=0)
    specs = root / "task_specs"
    specs.mkdir()
    for name in ["_base_video.yaml", *SYNTH_SPECS]:
        shutil.copy(ROOT / "task_specs" / name, specs / name)
    (root / "pyproject.toml").touch()  # marks the project root, so ../data stays inside it
    return root


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Qwen2.5-VL model folder (built offline by the kit)."""
    from videorl_kit.train.tiny_model import build_tiny_model

    return Path(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", "qwen2.5-vl").path)


def gold_response(sample: Sample) -> str:
    """The gold answer as a response: ``<answer>gold</answer>``; for a code row (whose gold is
    its tests) the synthetic suite's reference implementation under the entry point's name."""
    if sample.problem_type is not None and sample.problem_type.value == "code":
        from videorl_kit.synth import tasks_code

        helpers = [tasks_code._count_colour, tasks_code._box_area, tasks_code._box_iou,
                   tasks_code._visible_span, tasks_code._direction]  # fmt: skip
        entry = json.loads(sample.answer)["entry_point"]
        source = "\n".join(inspect.getsource(f) for f in helpers)
        return f"<answer>{source}\n{entry} = _{entry}\n</answer>"
    return f"<answer>{sample.answer}</answer>"


def write_predictions(path: Path, tasks: list[EvalTask], response: str | None = None) -> Path:
    """One ``{"task", "id", "response"}`` line per sample; the gold response by default."""
    with path.open("w", encoding="utf-8") as handle:
        for task in tasks:
            for sample in task.samples:
                text = gold_response(sample) if response is None else response
                handle.write(
                    json.dumps({"task": task.id, "id": sample.sample_id, "response": text}) + "\n"
                )
    return path


def cached_requests(tasks: list[EvalTask], store: Path, seed: int = 0) -> list[GenerationRequest]:
    """One request per sample of ``tasks`` (no system turn), its media read from a cache
    built here in ``store`` with each spec's budget."""
    from videorl_kit.eval.requests import StoreMedia, sample_seed
    from videorl_kit.spec.prompt import render_prompt
    from videorl_kit.store import build_cache

    build_cache([task.spec for task in tasks], store, workers=1)
    media = StoreMedia(store)
    rows = media.sample_rows([task.id for task in tasks])
    requests = []
    for task in tasks:
        for sample in task.samples:
            videos, images = media.load(rows[(task.id, sample.sample_id)])
            request = GenerationRequest(
                task.id, sample.sample_id, render_prompt(task.spec, sample), None,
                sample.problem_type.value, sample.options, task.section.generation,
                sample_seed(seed, task.id, sample.sample_id), videos=videos, images=images,
            )  # fmt: skip
            requests.append(request)
    return requests


def count_generated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``task/sample`` of every request the backends that ``run_eval`` makes generate, in
    order (the list fills as runs go)."""
    from videorl_kit.eval import runner

    generated: list[str] = []
    make_backend = runner.make_backend

    def counting(config, tasks):
        backend = make_backend(config, tasks)
        generate = backend.generate

        def record(requests):
            generated.extend(f"{r.task_id}/{r.sample_id}" for r in requests)
            return generate(requests)

        backend.generate = record
        return backend

    monkeypatch.setattr(runner, "make_backend", counting)
    return generated
