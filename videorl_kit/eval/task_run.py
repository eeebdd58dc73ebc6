"""One task of a run: requests, generation in batches, verdicts, the sample file, its result.

:func:`run_task` generates and scores the samples of one task that its sample file does not
hold yet (an interrupted run resumes here), skipping by name every sample that cannot be
run; :func:`task_result` aggregates the records into the task's ``results.json`` entry.

Example:
    >>> row_value({"bins": {"dataset": "egonlq"}}, "bins.dataset")
    'egonlq'
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.eval.backends.base import Backend
from videorl_kit.eval.judge import JudgeRun
from videorl_kit.eval.metrics import TaskMetrics, task_metrics
from videorl_kit.eval.records import SampleRecord, content_hash
from videorl_kit.eval.requests import (
    CachedSample,
    GenerationRequest,
    StoreMedia,
    apply_variant,
    sample_seed,
)
from videorl_kit.eval.results import CategoryRow, Metric, SkippedSample, TaskResult
from videorl_kit.eval.samples_log import SampleLog
from videorl_kit.eval.tasks import EvalTask
from videorl_kit.media.hashing import file_content_hash
from videorl_kit.rewards.task import TaskReward
from videorl_kit.spec.data import Sample
from videorl_kit.spec.prompt import render_prompt
from videorl_kit.store.provenance import spec_sha256

ProgressFn = Callable[[str], None]


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
        derived = metrics.derived.get(name)
        if derived is not None:
            values[name] = derived.label(row_value(sample.raw, derived.column))
            continue
        value = row_value(sample.raw, name)
        values[name] = None if value is None else str(value)
    return values


def uses_media(task: EvalTask, backend: Backend) -> bool:
    """Whether the task's requests carry media (a media backend, not a blind variant)."""
    return backend.needs_media and task.section.variant not in ("no_visual", "random_choice")


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
        return apply_variant(request, self.task.section.variant)

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
                    "variant": self.task.section.variant,
                    "frame_orders": [video.frame_order for video in request.videos],
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
    judge: JudgeRun | None = None,
) -> tuple[list[SampleRecord], list[SkippedSample]]:
    """Generate and score the samples of one task not scored yet (judge-graded ones through
    ``judge``, :mod:`videorl_kit.eval.judge`); return all its records."""
    try:
        reward = TaskReward.from_spec(task.spec)
    except (ValueError, LookupError) as exc:
        raise UserError(f"{task.id}: cannot build its reward: {exc}") from None
    run = _TaskRun(task, reward, SampleLog(out, task.id), seed)
    with_media = uses_media(task, backend)
    runnable: list[tuple[Sample, CachedSample | None]] = []
    for sample in task.samples:
        cached = rows.get((task.id, sample.sample_id)) if with_media else None
        has_media = with_media and bool(sample.videos or sample.images)
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
            if judge is not None and records:
                weights = task.spec.reward.weights
                records = judge.grade(
                    records, by_id, weights=(weights.accuracy, weights.format), seed=seed
                )
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
    judge: JudgeRun | None = None,
) -> TaskResult:
    """The ``results.json`` entry of one task."""

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
        protocol=task.protocol,
        variant=task.section.variant,
        budget=spec.budget.model_dump(mode="json"),
        generation=task.section.generation.model_dump(mode="json"),
        n_rows=task.n_rows,
        n_scored=aggregated.n_scored,
        n_unverifiable=aggregated.n_unverifiable,
        n_error=aggregated.n_error,
        n_unscored=aggregated.n_unscored,
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
        judge=judge.summary(records) if judge is not None else None,
        samples_file=samples_file.name,
        samples_sha256=file_content_hash(samples_file),
    )
