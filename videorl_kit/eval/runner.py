"""``run_eval``: benchmark specs + a backend -> ``samples_<task>.jsonl`` files and ``results.json``.

The run, step by step:

1. Read the specs into tasks (:mod:`videorl_kit.eval.tasks`): overrides, fixture, limit,
   variant, pinned annotations, rows.
2. Create the backend (cheap checks only: the model folder is a vision-language model, the
   predictions file matches the samples).
3. Claim the output folder: ``run.json`` records the configuration; a folder holding a run of
   another configuration is refused, the same configuration resumes.
4. If the backend looks at media: check each spec's media root and budget patch, then build
   the missing cache entries with the spec's budget (:func:`~videorl_kit.store.build_cache`).
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from videorl_kit import __version__
from videorl_kit.errors import UserError
from videorl_kit.eval.backends.base import Backend
from videorl_kit.eval.environment import git_state, package_versions, platform_string
from videorl_kit.eval.metrics import TaskMetrics, task_metrics
from videorl_kit.eval.records import SampleRecord, content_hash
from videorl_kit.eval.requests import (
    CachedSample,
    GenerationRequest,
    StoreMedia,
    apply_variant,
    sample_seed,
)
from videorl_kit.eval.results import (
    CategoryRow,
    EvalResults,
    Metric,
    ModelInfo,
    RunInfo,
    SkippedSample,
    TaskResult,
)
from videorl_kit.eval.samples_log import SampleLog, atomic_write_text
from videorl_kit.eval.tasks import EvalTask, load_tasks
from videorl_kit.rewards.task import TaskReward
from videorl_kit.spec.data import Sample
from videorl_kit.spec.eval_section import Variant
from videorl_kit.spec.prompt import render_prompt
from videorl_kit.store.provenance import spec_sha256

BackendName = Literal["transformers", "vllm", "replay"]
RUN_FILE = "run.json"
ProgressFn = Callable[[str], None]


@dataclass
class EvalConfig:
    """Everything ``videorl-kit eval`` takes (see the command's help for each option)."""

    specs: Sequence[str | Path]
    out: str | Path
    backend: BackendName = "transformers"
    model: str | None = None
    predictions: str | Path | None = None
    limit: int | None = None
    seed: int = 0
    store: str | Path = "store"
    batch_size: int = 8
    variant: Variant | None = None
    overrides: list[str] = field(default_factory=list)
    fixture: bool = False
    workers: int | None = None
    trajectories: bool = False
    command: list[str] = field(default_factory=list)


# -- small helpers --------------------------------------------------------------------------


def row_value(row: dict[str, Any], dotted: str) -> Any:
    """The value at a dotted column path of a raw row (``bins.dataset``), or None.

    Example:
        >>> row_value({"bins": {"dataset": "egonlq"}, "x": 1}, "bins.dataset")
        'egonlq'
        >>> row_value({"x": 1}, "y.z") is None
        True
    """
    value: Any = row
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _cluster(task: EvalTask, sample: Sample) -> str:
    by = task.section.metrics.cluster_by
    if by is not None:
        value = row_value(sample.raw, by)
        if value is not None:
            return str(value)
    if sample.videos:
        root = task.spec.resolve(task.spec.data.media_root or ".")
        return os.path.relpath(sample.videos[0], root)
    return sample.sample_id


def _categories(task: EvalTask, sample: Sample) -> dict[str, str | None]:
    metrics = task.section.metrics
    names = dict.fromkeys([*metrics.categories, *metrics.macro_over])
    values = {}
    for name in names:
        value = row_value(sample.raw, name)
        values[name] = None if value is None else str(value)
    return values


def _variant_of(task: EvalTask) -> Variant:
    return task.section.variant


def _uses_media(task: EvalTask, backend: Backend) -> bool:
    return backend.needs_media and _variant_of(task) not in ("no_visual", "random_choice")


# -- backend --------------------------------------------------------------------------------


def make_backend(config: EvalConfig, tasks: list[EvalTask]) -> Backend:
    """The backend the configuration asks for (cheap checks only; weights load later)."""
    from videorl_kit.eval.backends.random_choice import RandomChoiceBackend

    if all(_variant_of(t) == "random_choice" for t in tasks):
        return RandomChoiceBackend()
    if config.backend == "replay":
        from videorl_kit.eval.backends.replay import ReplayBackend

        if config.predictions is None:
            raise UserError("--backend replay needs --predictions FILE.jsonl")
        expected = {t.id: [s.sample_id for s in t.samples] for t in tasks}
        return ReplayBackend(
            config.predictions, expected, limited=config.limit is not None, label=config.model
        )
    if config.predictions is not None:
        raise UserError(f"--predictions is only read by --backend replay, not {config.backend}")
    if config.model is None:
        raise UserError(f"--backend {config.backend} needs --model PATH (a local model folder)")
    if config.backend == "transformers":
        from videorl_kit.eval.backends.transformers_backend import TransformersBackend

        return TransformersBackend(config.model)
    if config.backend == "vllm":
        from videorl_kit.eval.backends.vllm_backend import VllmBackend

        return VllmBackend(config.model, seed=config.seed)
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
        "fixture": config.fixture,
        "overrides": list(config.overrides),
        "tasks": {
            t.id: {"spec_sha256": spec_sha256(t.spec), "data_sha256": t.data.sha256} for t in tasks
        },
    }


def claim_run_dir(out: Path, manifest: dict[str, Any]) -> str:
    """Create or resume ``out``; refuse a folder holding something else. Returns the run id."""
    run_file = out / RUN_FILE
    if run_file.is_file():
        try:
            previous = json.loads(run_file.read_text(encoding="utf-8"))
        except ValueError:
            raise UserError(f"{run_file}: unreadable; remove {out} to start over") from None
        known = previous.get("manifest", {})
        if known != manifest:
            keys = sorted(
                k for k in manifest.keys() | known.keys() if known.get(k) != manifest.get(k)
            )
            raise UserError(
                f"--out {out} holds a run with another configuration (differs in: "
                f"{', '.join(keys)}); use another --out, or remove it to start over"
            )
        return str(previous["run_id"])
    if out.exists() and any(out.iterdir()):
        raise UserError(f"--out {out} is not empty and is not an eval run folder (no {RUN_FILE})")
    out.mkdir(parents=True, exist_ok=True)
    run_id = f"{out.resolve().name}-{content_hash(manifest)[:12]}"
    atomic_write_text(run_file, json.dumps({"run_id": run_id, "manifest": manifest}, indent=2))
    return run_id


# -- media ----------------------------------------------------------------------------------


def check_media_inputs(tasks: list[EvalTask], backend: Backend) -> None:
    """Each media-using task has its media root, and budgets resized for the model's patch."""
    problems = []
    for task in tasks:
        if not _uses_media(task, backend) or not any(s.videos or s.images for s in task.samples):
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
        factor = backend.patch_factor
        for kind, budget in (("video", spec.budget.video), ("image", spec.budget.image)):
            if factor is not None and budget.patch != factor:
                problems.append(
                    f"{spec.id}: budget.{kind}.patch is {budget.patch} but the model's vision "
                    f"tower expects {factor}; add --set budget.{kind}.patch={factor}"
                )
    if problems:
        raise UserError("; ".join(problems))


def build_media(
    config: EvalConfig, tasks: list[EvalTask], backend: Backend, progress: ProgressFn
) -> tuple[StoreMedia | None, dict[tuple[str, str], CachedSample]]:
    """Build the missing cache entries of the media-using tasks (checked by
    :func:`check_media_inputs`); return the store's media and its rows for those tasks."""
    from videorl_kit.store import build_cache

    using = [t for t in tasks if _uses_media(t, backend)]
    if not using:
        return None, {}
    progress(f"cache: building missing entries in {config.store}")
    summary = build_cache(
        [t.spec for t in using], config.store, workers=config.workers or min(4, os.cpu_count() or 1)
    )
    progress(
        f"cache: {summary.n_ok} ok ({summary.n_already_cached} already cached), "
        f"{summary.n_failed} failed, {summary.n_skipped} skipped"
    )
    media = StoreMedia(config.store)
    return media, media.sample_rows([t.id for t in using])


# -- one task -------------------------------------------------------------------------------


@dataclass
class _TaskRun:
    task: EvalTask
    reward: TaskReward
    log: SampleLog
    seed: int
    skipped: list[SkippedSample] = field(default_factory=list)

    def request(
        self, sample: Sample, media: StoreMedia | None, cached: CachedSample | None
    ) -> GenerationRequest:
        spec = self.task.spec
        videos, images = (), ()
        keys: tuple[str, ...] = ()
        if media is not None and cached is not None:
            videos, images = media.load(cached)
            keys = (*cached.video_keys, *cached.image_keys)
        request = GenerationRequest(
            task_id=spec.id,
            sample_id=sample.sample_id,
            prompt=render_prompt(spec, sample),
            system=spec.prompt.system,
            problem_type=sample.problem_type.value,
            options=sample.options,
            generation=self.task.section.generation,
            seed=sample_seed(self.seed, spec.id, sample.sample_id),
            videos=videos,
            images=images,
            media_keys=keys,
        )
        return apply_variant(request, _variant_of(self.task))

    def record(self, sample: Sample, request: GenerationRequest, response: str) -> SampleRecord:
        result = self.reward.score_sample(sample, response)
        return SampleRecord(
            task_id=self.task.id,
            sample_id=sample.sample_id,
            row_index=sample.row_index,
            problem_type=request.problem_type,
            doc_hash=content_hash(sample.raw),
            prompt_hash=content_hash(
                {
                    "system": request.system,
                    "prompt": request.prompt,
                    "media": list(request.media_keys),
                    "variant": _variant_of(self.task),
                }
            ),
            target_hash=content_hash(
                {
                    "problem_type": request.problem_type,
                    "answer": sample.answer,
                    "options": sample.options,
                }
            ),
            response_hash=content_hash(response),
            prompt=request.prompt,
            target=sample.answer,
            options=sample.options,
            media=list(request.media_keys),
            response=response,
            accuracy=result.accuracy,
            format=result.format,
            overall=result.overall,
            status=result.status,
            details=json.loads(json.dumps(result.details, default=str)),
            cluster=_cluster(self.task, sample),
            categories=_categories(self.task, sample),
        )


def _generate(backend: Backend, requests: list[GenerationRequest]) -> list[str | Exception]:
    """Responses of a batch; if the batch fails, each request alone (a failure is returned)."""
    try:
        responses = backend.generate(requests)
        if len(responses) != len(requests):
            raise RuntimeError(f"backend returned {len(responses)} responses for {len(requests)}")
        return list(responses)
    except UserError:
        raise
    except Exception as exc:  # a sample the model cannot take: retried alone below
        if len(requests) == 1:
            return [exc]
    results: list[str | Exception] = []
    for request in requests:
        try:
            results.append(backend.generate([request])[0])
        except UserError:
            raise
        except Exception as exc:  # one sample the model cannot take: skip it, by name
            results.append(exc)
    return results


def run_task(
    task: EvalTask,
    backend: Backend,
    *,
    out: Path,
    seed: int,
    batch_size: int,
    media: StoreMedia | None,
    rows: dict[tuple[str, str], CachedSample],
    progress: ProgressFn,
) -> tuple[list[SampleRecord], list[SkippedSample]]:
    """Generate and score the samples of one task not scored yet; return all its records."""
    try:
        reward = TaskReward.from_spec(task.spec)
    except (ValueError, LookupError) as exc:
        raise UserError(f"{task.id}: cannot build its reward: {exc}") from None
    run = _TaskRun(task, reward, SampleLog(out, task.id), seed)
    uses_media = _uses_media(task, backend)
    runnable: list[tuple[Sample, CachedSample | None]] = []
    for sample in task.samples:
        cached = rows.get((task.id, sample.sample_id)) if uses_media else None
        has_media = uses_media and bool(sample.videos or sample.images)
        if has_media and (cached is None or cached.status != "ready"):
            reason = cached.skip_reason if cached is not None else "not in the store"
            run.skipped.append(SkippedSample(sample_id=sample.sample_id, reason=str(reason)))
            continue
        runnable.append((sample, cached))
    if not run.log.is_complete:
        done = run.log.done_ids()
        pending = [(s, c) for s, c in runnable if s.sample_id not in done]
        if done:
            progress(f"{task.id}: resuming, {len(done)} samples already scored")
        for start in range(0, len(pending), batch_size):
            batch = pending[start : start + batch_size]
            requests = []
            for sample, cached in batch:
                try:
                    requests.append(run.request(sample, media, cached))
                except UserError as exc:  # a prompt that does not render, unreadable frames
                    run.skipped.append(SkippedSample(sample_id=sample.sample_id, reason=str(exc)))
            by_id = {s.sample_id: s for s, _ in batch}
            responses = _generate(backend, requests) if requests else []
            records = []
            for request, response in zip(requests, responses, strict=True):
                if isinstance(response, Exception):
                    reason = f"generation_error: {type(response).__name__}: {response}"[:500]
                    run.skipped.append(SkippedSample(sample_id=request.sample_id, reason=reason))
                    continue
                records.append(run.record(by_id[request.sample_id], request, response))
            run.log.append(records)
            progress(f"{task.id}: {min(start + batch_size, len(pending))}/{len(pending)} generated")
        skipped_ids = {s.sample_id for s in run.skipped}
        run.log.finalize([s.sample_id for s, _ in runnable if s.sample_id not in skipped_ids])
    recorded = run.log.records()
    records = [recorded[s.sample_id] for s, _ in runnable if s.sample_id in recorded]
    known = {s.sample_id for s in run.skipped} | set(recorded)
    for sample, _ in runnable:  # finished earlier with a generation error, not retried
        if sample.sample_id not in known:
            run.skipped.append(
                SkippedSample(sample_id=sample.sample_id, reason="not scored in the finished run")
            )
    return records, run.skipped


def task_result(
    task: EvalTask,
    records: list[SampleRecord],
    skipped: list[SkippedSample],
    samples_file: Path,
) -> TaskResult:
    """The ``results.json`` entry of one task."""
    from videorl_kit.media.hashing import file_content_hash

    aggregated: TaskMetrics = task_metrics(records, task.section.metrics)
    verifiers = dict(sorted({r.problem_type: r.details.get("verifier") for r in records}.items()))
    spec = task.spec
    return TaskResult(
        task_id=spec.id,
        benchmark=task.section.benchmark or spec.id,
        group=task.section.group,
        spec_version=spec.version,
        spec_sha256=spec_sha256(spec),
        spec_file=str(spec.source_file) if spec.source_file else None,
        spec=spec.resolved_dict(),
        spec_hub_files=task.hub_files,
        data=task.data,
        variant=task.section.variant,
        budget=spec.budget.model_dump(mode="json"),
        generation=task.section.generation.model_dump(mode="json"),
        n_rows=task.n_rows,
        n_scored=aggregated.n_scored,
        n_unverifiable=aggregated.n_unverifiable,
        n_error=aggregated.n_error,
        n_skipped=len(task.skipped) + len(skipped),
        skipped=[*task.skipped, *skipped],
        primary_metric=aggregated.primary,
        metrics={
            k: Metric(value=v.value, stderr=v.stderr, n=v.n) for k, v in aggregated.metrics.items()
        },
        categories={
            name: [CategoryRow(value=r.value, n=r.n, score=r.score, stderr=r.stderr) for r in rows]
            for name, rows in aggregated.categories.items()
        },
        notes=[*aggregated.notes, f"verifiers: {json.dumps(verifiers)}"],
        samples_file=samples_file.name,
        samples_sha256=file_content_hash(samples_file),
    )


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
        limit=config.limit, variant=config.variant,
    )  # fmt: skip
    out = Path(config.out)
    backend = make_backend(config, tasks)
    try:
        model = backend.info()
        check_media_inputs(tasks, backend)
        run_id = claim_run_dir(out, run_manifest(config, tasks, model))
        media, rows = build_media(config, tasks, backend, say)
        results: dict[str, TaskResult] = {}
        all_records: list[SampleRecord] = []
        for task in tasks:
            task_backend = backend
            if _variant_of(task) == "random_choice" and backend.kind != "random_choice":
                from videorl_kit.eval.backends.random_choice import RandomChoiceBackend

                task_backend = RandomChoiceBackend()
            records, skipped = run_task(
                task, task_backend, out=out, seed=config.seed, batch_size=config.batch_size,
                media=media, rows=rows, progress=say,
            )  # fmt: skip
            samples_file = SampleLog(out, task.id).final
            results[task.id] = task_result(task, records, skipped, samples_file)
            all_records += records
        model = backend.info()
    finally:
        backend.close()
    if config.trajectories:
        from videorl_kit.store.tables import StoreTables
        from videorl_kit.store.trajectories import append_trajectories

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
