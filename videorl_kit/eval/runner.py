"""``run_eval``: benchmark specs + a backend -> ``samples_<task>.jsonl`` files and ``results.json``.

The run, step by step:

1. Read the specs into tasks (:mod:`videorl_kit.eval.tasks`): overrides, fixture, limit,
   variant, pinned annotations, rows.
2. Create the backend (cheap checks only: the model folder is a vision-language model, the
   predictions file matches the samples).
3. Claim the output folder: ``run.json`` records the configuration; a folder holding a run of
   another configuration is refused, the same configuration resumes.
4. If the backend looks at media: check each spec's media root and budget patch, then build
   the missing cache entries with the spec's budget (:func:`~videorl_kit.store.build_frames`,
   which leaves the store's ``samples`` table, read by training, as it is).
   A sample whose video failed to decode is skipped by name; the run goes on.
5. Per task, per batch: requests (cached frames + metadata, variant applied), generation,
   verdicts, records appended to the task's partial sample file; finished samples of an
   interrupted run are not generated again. A batch that fails is retried sample by sample;
   a sample that still fails is skipped by name.
6. Aggregate with polars, optionally append the trajectories to the store, and write
   ``results.json`` atomically, last.

Example (chance level on MVBench's shipped fixture: no model, no media):
    >>> import tempfile
    >>> config = EvalConfig(specs=["task_specs/eval/mvbench.yaml"], out=tempfile.mkdtemp(),
    ...     fixture=True, variant="random_choice")
    >>> results = run_eval(config)
    >>> results.model.backend, results.tasks["mvbench"].n_scored
    ('random_choice', 3)
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from videorl_kit import __version__
from videorl_kit.core.errors import UserError
from videorl_kit.eval.backends.base import Backend
from videorl_kit.eval.backends.random_choice import RandomChoiceBackend
from videorl_kit.eval.backends.replay import ReplayBackend
from videorl_kit.eval.backends.transformers_backend import TransformersBackend
from videorl_kit.eval.backends.vllm_backend import VllmBackend, media_limits
from videorl_kit.eval.backends.vllm_options import VllmOptions, parse_model_args
from videorl_kit.eval.environment import git_state, package_versions, platform_string
from videorl_kit.eval.judge import JudgeRun
from videorl_kit.eval.records import SampleRecord, content_hash
from videorl_kit.eval.requests import CachedSample, StoreMedia
from videorl_kit.eval.results import EvalResults, ModelInfo, RunInfo, TaskResult
from videorl_kit.eval.run_folder import claim_run_dir
from videorl_kit.eval.samples_log import SampleLog
from videorl_kit.eval.task_run import ProgressFn, run_task, task_result, uses_media
from videorl_kit.eval.tasks import EvalTask, load_tasks
from videorl_kit.spec.eval_section import Variant
from videorl_kit.store import build_frames
from videorl_kit.store.provenance import spec_sha256
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.trajectories import append_trajectories

BackendName = Literal["transformers", "vllm", "replay"]


@dataclass
class EvalConfig:
    """Everything ``videorl-kit eval`` takes (see the command's help for each option)."""

    specs: Sequence[str | Path]
    out: str | Path
    backend: BackendName = "transformers"
    model: str | None = None
    predictions: str | Path | Sequence[str | Path] | None = None
    limit: int | None = None
    seed: int = 0
    store: str | Path = "store"
    batch_size: int = 8
    variant: Variant | None = None
    overrides: list[str] = field(default_factory=list)
    fixture: bool = False
    model_args: str | None = None
    workers: int | None = None
    trajectories: bool = False
    command: list[str] = field(default_factory=list)
    protocol: str = "reasoning"
    judge_model: str | None = None
    rejudge: bool = False


# -- backend --------------------------------------------------------------------------------


def make_backend(config: EvalConfig, tasks: list[EvalTask]) -> Backend:
    """The backend the configuration asks for (cheap checks only; weights load later)."""

    if config.model_args and config.backend != "vllm":
        raise UserError(f"--model-args is read by --backend vllm only, not {config.backend}")
    if all(t.section.variant == "random_choice" for t in tasks):
        return RandomChoiceBackend()
    if config.backend == "replay":
        if config.predictions is None:
            raise UserError("--backend replay needs --predictions FILE.jsonl")
        return ReplayBackend(
            config.predictions, tasks, limited=config.limit is not None, label=config.model
        )
    if config.predictions is not None:
        raise UserError(f"--predictions is only read by --backend replay, not {config.backend}")
    if config.model is None:
        raise UserError(f"--backend {config.backend} needs --model PATH (a local model folder)")
    if config.backend == "vllm":
        options = parse_model_args(config.model_args)
        return VllmBackend(
            config.model, options=options, media_limits=media_limits(tasks), seed=config.seed
        )
    if config.backend == "transformers":
        return TransformersBackend(config.model)
    raise UserError(f"unknown backend {config.backend!r}; use transformers, vllm or replay")


# -- the run folder -------------------------------------------------------------------------


def run_manifest(config: EvalConfig, tasks: list[EvalTask], model: ModelInfo) -> dict[str, Any]:
    """What makes two runs the same run (a resumed run must match it exactly)."""
    return {
        "kit_version": __version__,
        "backend": model.backend,
        "model_fingerprint": model.fingerprint,
        "seed": config.seed,
        "limit": config.limit,
        "variant": config.variant,
        "protocol": config.protocol,
        "judges": {t.id: _judge_model(config, t) for t in tasks if t.section.judge is not None},
        **({"rejudge": True} if config.rejudge else {}),
        "fixture": config.fixture,
        "overrides": list(config.overrides),
        "tasks": {
            t.id: {"spec_sha256": spec_sha256(t.spec), "data_sha256": t.data.sha256} for t in tasks
        },
    }


def covered_tasks(
    tasks: list[EvalTask], backend: Backend, progress: ProgressFn
) -> tuple[list[EvalTask], list[str]]:
    """The tasks a replay has predictions for, and the ids of those it leaves out (said)."""
    if not isinstance(backend, ReplayBackend):
        return tasks, []
    covered = set(backend.covered)
    left_out = [t.id for t in tasks if t.id not in covered]
    if len(left_out) == len(tasks):
        raise UserError(
            "--predictions: no prediction for any evaluated task "
            f"({', '.join(left_out)}); check the ids, the task fields or the lmms-eval aliases"
        )
    if left_out:
        progress(f"replay: no predictions for {', '.join(left_out)}: left out of this run")
    return [t for t in tasks if t.id in covered], left_out


# -- judges ---------------------------------------------------------------------------------


def _judge_model(config: EvalConfig, task: EvalTask) -> str | None:
    judge = task.section.judge
    return None if judge is None else (config.judge_model or judge.model)


def _judge_options(task: EvalTask) -> VllmOptions:
    """The vLLM judge's engine options (``eval.judge.model_args``), errors naming the spec."""
    judge = task.section.judge
    assert judge is not None
    try:
        return parse_model_args(judge.model_args)
    except UserError as error:
        where = task.spec.source_file or task.id
        raise UserError(f"{where}: eval.judge.model_args: {error}") from error


def make_judges(
    config: EvalConfig, tasks: list[EvalTask], backend: Backend
) -> tuple[dict[str, JudgeRun], list[Backend]]:
    """One :class:`JudgeRun` per task declaring ``eval.judge``; judge backends are shared by
    the tasks naming the same model and backend (returned to be closed)."""
    stored = getattr(backend, "stored_judgements", {})
    loaded: dict[tuple[str, str, str], Backend] = {}
    judges: dict[str, JudgeRun] = {}
    for task in tasks:
        spec = task.section.judge
        if spec is None:
            continue
        model = _judge_model(config, task)
        judge_backend = None
        if model is not None:
            key = (spec.backend, str(model), spec.model_args or "")
            if key not in loaded:
                text_only = {"video": 0, "image": 0}  # a judge reads text
                loaded[key] = (
                    VllmBackend(model, options=_judge_options(task), media_limits=text_only,
                                seed=config.seed)
                    if spec.backend == "vllm"
                    else TransformersBackend(model)
                )  # fmt: skip
            judge_backend = loaded[key]
        mine = {sid: block for (tid, sid), block in stored.items() if tid == task.id}
        judges[task.id] = JudgeRun(spec, judge_backend, mine, rejudge=config.rejudge)
    return judges, list(loaded.values())


# -- media ----------------------------------------------------------------------------------


def check_media_inputs(tasks: list[EvalTask], backend: Backend) -> None:
    """Each media-using task has its media root, and budgets resized for the model's patch
    (one problem per budget field, naming every spec that has it)."""
    problems = []
    factor = backend.patch_factor
    mismatched: dict[tuple[str, int], list[str]] = {}
    for task in tasks:
        if not uses_media(task, backend) or not any(s.videos or s.images for s in task.samples):
            continue
        spec = task.spec
        root = spec.resolve(spec.data.media_root) if spec.data.media_root else None
        if root is not None and not root.is_dir():
            problems.append(
                f"{spec.id}: media root {root} does not exist (data.media_root"
                f"{' in ' + str(spec.source_file) if spec.source_file else ''}); put the "
                f"benchmark's videos there or point to them with "
                f"--set {spec.id}:data.media_root=DIR"
            )
        used = {
            "video": (spec.budget.video, any(s.videos for s in task.samples)),
            "image": (spec.budget.image, any(s.images for s in task.samples)),
        }
        for kind, (budget, present) in used.items():
            if present and factor is not None and budget.patch != factor:
                mismatched.setdefault((kind, budget.patch), []).append(spec.id)
    for (kind, patch), spec_ids in mismatched.items():
        problems.append(
            f"{', '.join(spec_ids)}: budget.{kind}.patch is {patch} but the model's vision "
            f"tower expects {factor}; add --set budget.{kind}.patch={factor}"
        )
    if problems:
        raise UserError("; ".join(problems))


def build_media(
    config: EvalConfig, tasks: list[EvalTask], backend: Backend, progress: ProgressFn
) -> tuple[StoreMedia | None, dict[tuple[str, str], CachedSample]]:
    """Build the missing cache entries of the media-using tasks (checked by
    :func:`check_media_inputs`); return the store's media and the tasks' samples rows.

    The store's ``samples`` table is left as it is (:func:`~videorl_kit.store.build_frames`):
    an eval of a task's first rows, fixture or overridden spec must not change the rows
    training reads."""

    using = [t for t in tasks if uses_media(t, backend)]
    if not using:
        return None, {}
    progress(f"cache: building missing entries in {config.store}")
    built = build_frames(
        [t.spec for t in using], config.store, workers=config.workers or min(4, os.cpu_count() or 1)
    )
    summary = built.summary
    progress(
        f"cache: {summary.n_ok} ok ({summary.n_already_cached} already cached), "
        f"{summary.n_failed} failed, {summary.n_skipped} skipped"
    )
    rows = {key: CachedSample.from_row(row) for key, row in built.samples.items()}
    return StoreMedia(config.store), rows


def _trajectory_rows(run_id: str, model: ModelInfo, records: list[SampleRecord]) -> list[dict]:
    return [
        {
            "trajectory_id": content_hash([run_id, r.task_id, r.sample_id, r.response_hash]),
            "sample_id": r.sample_id,
            "task_id": r.task_id,
            "response": r.response,
            "reward_accuracy": r.accuracy,
            "reward_format": r.format,
            "reward_overall": r.overall,
            "reward_status": r.status,
            "reward_details": json.dumps(r.details, sort_keys=True),
            "policy_id": f"{model.backend}:{model.fingerprint[:16]}",
            "source": f"eval:{run_id}",
        }
        for r in records
    ]


def run_eval(config: EvalConfig, progress: ProgressFn | None = None) -> EvalResults:
    """Run the evaluation described by ``config`` (see the module docstring)."""
    say = progress or (lambda _message: None)
    started = datetime.now(UTC)
    clock = time.perf_counter()
    if config.batch_size < 1:
        raise UserError(f"--batch-size must be at least 1, not {config.batch_size}")
    tasks = load_tasks(
        list(config.specs), overrides=config.overrides, fixture=config.fixture,
        limit=config.limit, variant=config.variant, protocol=config.protocol,
    )  # fmt: skip
    out = Path(config.out)
    backend = make_backend(config, tasks)
    judge_backends: list[Backend] = []
    try:
        tasks, left_out = covered_tasks(tasks, backend, say)
        judges, judge_backends = make_judges(config, tasks, backend)
        model = backend.info()
        check_media_inputs(tasks, backend)
        run_id = claim_run_dir(out, run_manifest(config, tasks, model))
        media, rows = build_media(config, tasks, backend, say)
        results: dict[str, TaskResult] = {}
        all_records: list[SampleRecord] = []
        for task in tasks:
            task_backend = backend
            if task.section.variant == "random_choice" and backend.kind != "random_choice":
                task_backend = RandomChoiceBackend()
            judge = judges.get(task.id)
            records, skipped = run_task(
                task, task_backend, out=out, seed=config.seed, batch_size=config.batch_size,
                media=media, rows=rows, progress=say, judge=judge,
            )  # fmt: skip
            samples_file = SampleLog(out, task.id).final
            results[task.id] = task_result(task, records, skipped, samples_file, judge)
            all_records += records
        model = backend.info()
    finally:
        backend.close()
        for judge_backend in judge_backends:
            judge_backend.close()
    if config.trajectories:
        added = append_trajectories(
            StoreTables.create(config.store), _trajectory_rows(run_id, model, all_records)
        )
        say(f"trajectories: {added} new rows in {config.store}")
    finished = datetime.now(UTC)
    evaluation = EvalResults(
        run=RunInfo(
            run_id=run_id,
            started_at=started.isoformat(),
            finished_at=finished.isoformat(),
            seconds=round(time.perf_counter() - clock, 3),
            seed=config.seed,
            limit=config.limit,
            variant=config.variant,
            protocol=config.protocol,
            left_out=left_out,
            overrides=list(config.overrides),
            fixture=config.fixture,
            store=str(config.store) if media is not None or config.trajectories else None,
            batch_size=config.batch_size,
            kit_version=__version__,
            git=git_state(),
            versions=package_versions(),
            platform=platform_string(),
            command=list(config.command or sys.argv),
        ),
        model=model,
        tasks=results,
    )
    evaluation.write(out)
    return evaluation
