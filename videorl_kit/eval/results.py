"""The typed contract of ``results.json``: :class:`EvalResults` (pydantic, strict).

One file per run folder, written atomically and *last*: a folder whose ``results.json``
exists holds a complete run. Every key is documented here (as lm-eval's ``result_schema``
does); unknown keys are errors when reading, so a report never guesses.

Example:
    >>> Metric(value=0.5, stderr=0.1, n=20).value
    0.5
    >>> sorted(EvalResults.model_fields)
    ['model', 'run', 'schema_version', 'tasks']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from videorl_kit.core.errors import UserError, VideoRLKitError
from videorl_kit.core.safe_text import one_line, quoted
from videorl_kit.core.strict_model import StrictModel
from videorl_kit.eval.samples_log import atomic_write_text

RESULTS_FILE = "results.json"
SCHEMA_VERSION = 1

#: A score: a mean of per-sample scores, each in [0, 1] (the reward contract), so a number in
#: [0, 1]; NaN and infinities are refused; null where none was computed.
Score = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
#: A standard error of such a mean, clustered by video: never negative and below 1 (at most
#: about 0.71 for scores in [0, 1]); null below two clusters.
StdErr = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class _Results(StrictModel):
    """A part of ``results.json``: strict, and no NaN or infinity in any number field."""

    model_config = ConfigDict(allow_inf_nan=False)


class Metric(_Results):
    """A mean over ``n`` samples and its standard error clustered by video (None: < 2 videos)."""

    value: Score | None
    stderr: StdErr | None
    n: int = Field(..., ge=0)


class CategoryRow(_Results):
    """Mean per-sample score of one value of a category column."""

    value: str
    n: int = Field(..., ge=0)
    score: Score | None
    stderr: StdErr | None


class SkippedSample(_Results):
    """A row that was not scored, and why (malformed row, failed video, generation error)."""

    sample_id: str
    reason: str


class DataSource(_Results):
    """Where the rows came from, exactly."""

    kind: Literal["hub", "local", "fixture"]
    path: str | None = Field(None, description="Local file read (for Hub data: the cached copy).")
    sha256: str | None = Field(None, description="sha256 of the file read.")
    repo: str | None = None
    revision: str | None = Field(None, description="For Hub data: the commit actually read.")
    file: str | None = None
    declared_origin: str | None = Field(None, description="eval.source.origin of the spec.")
    declared_sha256: str | None = None
    source_verified: bool | None = Field(
        None, description="eval.source.verified: whether the spec's source was checked upstream."
    )


class TaskResult(_Results):
    """Everything about one evaluated benchmark."""

    task_id: str
    benchmark: str
    group: str | None
    spec_version: int
    spec_sha256: str = Field(..., description="sha256 of the resolved spec (after overrides).")
    spec_file: str | None
    spec: dict[str, Any] = Field(..., description="The fully resolved spec.")
    spec_hub_files: list[dict[str, Any]] = Field(
        default_factory=list, description="Hub files the spec was built from, at their commits."
    )
    data: DataSource
    protocol: str = Field(
        "reasoning",
        description="The protocol run: 'reasoning' (the spec as written) or 'official' (the "
        "benchmark's own prompt, generation length and frame sampling).",
    )
    variant: str
    budget: dict[str, Any]
    generation: dict[str, Any]
    n_rows: int = Field(..., ge=0, description="Rows read (after --limit).")
    n_scored: int = Field(..., ge=0, description="Samples whose verdict is ok.")
    n_unverifiable: int = Field(..., ge=0)
    n_error: int = Field(..., ge=0)
    n_unscored: int = Field(
        0, ge=0, description="Judge-graded questions without a judgement (not scored, not 0)."
    )
    n_skipped: int = Field(..., ge=0, description="Rows never scored (see skipped).")
    skipped: list[SkippedSample] = Field(default_factory=list)
    primary_metric: str
    metrics: dict[str, Metric]
    categories: dict[str, list[CategoryRow]] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    judge: dict[str, Any] | None = Field(
        None,
        description="The judge of judge-graded questions: model folder and fingerprint, "
        "backend, judged and replayed counts (None: the spec declares no judge).",
    )
    samples_file: str
    samples_sha256: str


class ModelInfo(_Results):
    """What produced the responses."""

    backend: Literal["transformers", "vllm", "replay", "random_choice"]
    path: str | None = Field(None, description="Model folder, or the predictions file.")
    name: str | None = Field(None, description="Model type / label.")
    fingerprint: str = Field(..., description="sha256 over config, weights index and weights.")
    fingerprint_files: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


class RunInfo(_Results):
    """How, when and with what software the run was made."""

    run_id: str
    started_at: str
    finished_at: str
    seconds: float = Field(..., ge=0)
    seed: int
    limit: int | None
    variant: str | None = Field(None, description="--variant override (None: each spec's own).")
    protocol: str = Field("reasoning", description="--protocol: reasoning or official.")
    left_out: list[str] = Field(
        default_factory=list,
        description="Tasks a replay had no predictions for, left out of the run.",
    )
    overrides: list[str] = Field(default_factory=list, description="--set overrides, in order.")
    fixture: bool = Field(False, description="True: the specs' shipped fixtures were evaluated.")
    store: str | None = Field(None, description="Frame store the media were read from.")
    batch_size: int = Field(..., ge=1)
    kit_version: str
    git: dict[str, Any] = Field(default_factory=dict, description="hash and dirty flag.")
    versions: dict[str, str | None] = Field(default_factory=dict)
    platform: str
    command: list[str] = Field(default_factory=list)


class EvalResults(_Results):
    """The whole ``results.json``."""

    schema_version: Literal[1] = SCHEMA_VERSION
    run: RunInfo
    model: ModelInfo
    tasks: dict[str, TaskResult]

    def write(self, run_dir: Path) -> Path:
        """Write ``run_dir/results.json`` atomically (temporary file, fsync, rename)."""
        path = run_dir / RESULTS_FILE
        atomic_write_text(path, json.dumps(self.model_dump(mode="json"), indent=2) + "\n")
        return path


def load_results(run_dir: str | Path) -> EvalResults:
    """Read and validate ``run_dir/results.json`` (a :class:`UserError` names what is wrong).

    Reading is strict: every value must have its declared JSON type (a string ``"0.9"`` or
    ``true`` is not a number, ``true`` is not a count), scores and standard errors must be
    finite numbers in [0, 1] (no ``NaN``/``Infinity``, no negative standard error); ``null``
    stays valid where the schema allows it (a metric with no scored sample, one video).

    Example:
        >>> load_results("/nonexistent")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.core.errors.UserError: /nonexistent: no results.json (not a finished eval run...
    """
    path = Path(run_dir) / RESULTS_FILE
    if not path.is_file():
        raise UserError(
            f"{run_dir}: no {RESULTS_FILE} (not a finished eval run; an interrupted run resumes "
            "when `videorl-kit eval` is run again with the same --out)"
        )
    raw = path.read_bytes()
    duplicated = _duplicated_key(raw)
    if duplicated:
        raise UserError(
            f"{path}: {duplicated}: the key appears twice in one object; a reader of the file "
            "and the report would disagree on its value (results files are written by "
            "`videorl-kit eval` and never repeat a key)"
        )
    try:
        return EvalResults.model_validate_json(raw, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        where = f"{one_line(field)}: " if field else ""  # no field: the file is not JSON
        got = first.get("input")
        shown = f", got {quoted(got, 40)}" if field and not isinstance(got, dict | list) else ""
        raise UserError(
            f"{path}: {where}{first['msg']}{shown} ({exc.error_count()} problems)"
        ) from None


class _DuplicateKeyError(VideoRLKitError, ValueError):
    """A JSON object that repeats a key (raised from inside ``json.loads``)."""


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKeyError(key)
        seen[key] = value
    return seen


def _duplicated_key(raw: bytes) -> str | None:
    """The first key that a JSON object of ``raw`` repeats, quoted for one line, or None (also
    when ``raw`` is not JSON: the schema check says that).

    Example:
        >>> _duplicated_key(b'{"a": {"value": 0.1, "value": 0.9}}')
        "'value'"
        >>> _duplicated_key(b'{"a": 1}') is None
        True
    """
    try:
        json.loads(raw, object_pairs_hook=_no_repeats)
    except _DuplicateKeyError as exc:
        return quoted(str(exc.args[0]), 60)
    except (ValueError, RecursionError):
        return None
    return None
