"""The ``eval:`` section of a task spec: what a benchmark adds to a task.

Everything evaluation-specific lives here, apart from the task models, so the training
side of a spec stays unchanged. A spec without an ``eval:`` section is evaluated with the
defaults below (the synthetic demo tasks are).

* ``annotations``: how a benchmark's own columns become samples (the annotation loader):
  a media-path template over other columns, the option style, the form of the gold answer
  and a map from the benchmark's type labels to problem types. EasyVideoR1's eval files
  (``problem``, ``options``, ``solution`` with ``<answer>``, ``path``, ``problem_type``,
  ``data_source``) need none of it: the field map reads them (``task_specs/eval/_peer.yaml``)
  and the data reader unwraps ``<answer>``. lmms-eval-style Hub datasets declare what
  their columns need. The data reader applies it to every row
  (:mod:`videorl_kit.spec.annotations`), so ``build-cache``, ``reward score --spec`` and
  ``eval`` see the same samples.
* ``metrics``: category columns for per-category tables, the column that clusters standard
  errors (the video), a hierarchical macro average, recall thresholds for grounding.
* ``generation``: sampling parameters.
* ``variant``: a robustness control (no visual input, shuffled frames, random choice).
* ``source``: where the annotation file comes from and whether that was verified.
* ``fixture``: a three-row file in the source's exact layout, with tiny media, so CI
  loads and scores every benchmark offline.

Example:
    >>> section = EvalSection.model_validate({
    ...     "benchmark": "Video-MME",
    ...     "annotations": {"video": "data/{videoID}.mp4"},
    ...     "metrics": {"categories": ["duration", "task_type"], "cluster_by": "videoID"},
    ... })
    >>> section.generation.temperature, section.metrics.recall_thresholds
    (0.0, [0.3, 0.5, 0.7])
    >>> section.annotations.answer
    'as_is'
"""

from __future__ import annotations

import string
from typing import Literal

from pydantic import Field, field_validator, model_validator

from videorl_kit.core.problem_types import ProblemType, canonical_problem_type
from videorl_kit.core.strict_model import StrictModel

AnswerForm = Literal["as_is", "option_index", "time_span"]
"""How the gold answer is written in the benchmark's answer column.

``as_is``: a form the verifiers read already (a letter, ``"C. a dog"``, the text of the right
option, a number, ``[s, e]``, JSON, or any of these inside ``<answer>…</answer>``);
``option_index``: the 0-based index of the correct option (becomes its letter);
``time_span``: ``"s-e"`` or ``[s, e]`` seconds (becomes ``{"time": [s, e]}``).
"""

Variant = Literal["standard", "no_visual", "shuffled_frames", "random_choice"]
"""Robustness controls: ``no_visual`` drops every image and video from the prompt,
``shuffled_frames`` permutes each video's frames (seeded per sample) while keeping their
timestamps in order, ``random_choice`` replaces the model by a seeded uniform guess among
the options (samples without options get an empty answer)."""


def template_fields(template: str) -> list[str]:
    """The column names a media-path template uses; only plain ``{column}`` fields are allowed.

    Raises ``ValueError`` for attribute or index access (``{row.x}``, ``{x[0]}``), format
    specs and conversions, so a template can only paste column values.

    Example:
        >>> template_fields("{dataset}/{scene_name}.mp4")
        ['dataset', 'scene_name']
        >>> template_fields("{x.__class__}")
        Traceback (most recent call last):
        ...
        ValueError: template field '{x.__class__}' must be a plain column name
    """
    names: list[str] = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            shown = name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            raise ValueError(f"template field '{{{shown}}}' must be a plain column name")
        names.append(name)
    return names


class AnnotationLayout(StrictModel):
    """How a benchmark's rows map onto the spec's fields (applied before ``data.fields``)."""

    video: str | None = Field(
        None,
        description="Media path template over row columns, e.g. 'data/{videoID}.mp4'; "
        "written into the data.fields.videos column (None: that column holds the paths).",
    )
    options: Literal["lettered", "unlettered"] = Field(
        "lettered",
        description="'unlettered': the options column holds bare texts, prefixed 'A. ', "
        "'B. ', ... when read.",
    )
    answer: AnswerForm = Field("as_is", description="Form of the gold answer (see AnswerForm).")
    problem_types: dict[str, ProblemType] = Field(
        default_factory=dict,
        description="Benchmark type labels -> problem types, applied to the data.fields."
        "problem_type column (e.g. {REC: numerical, SSR: boolean}).",
    )

    @field_validator("video")
    @classmethod
    def _plain_template(cls, value: str | None) -> str | None:
        if value is not None and not template_fields(value):
            raise ValueError(f"template {value!r} uses no column (write e.g. '{{videoID}}.mp4')")
        return value

    @field_validator("problem_types", mode="before")
    @classmethod
    def _canonical_types(cls, value: object) -> object:
        if isinstance(value, dict):
            return {
                k: canonical_problem_type(v) if isinstance(v, str) else v for k, v in value.items()
            }
        return value


class MetricsSpec(StrictModel):
    """What the evaluator aggregates besides the per-problem-type metrics."""

    primary: str | None = Field(
        None,
        description="Headline metric name (default: macro if macro_over, else accuracy, "
        "miou, st_score or mra, whichever the rows have).",
    )
    categories: list[str] = Field(
        default_factory=list, description="Row columns with the benchmark's own categories."
    )
    cluster_by: str | None = Field(
        None,
        description="Row column naming the video, to cluster standard errors "
        "(default: the sample's first media path).",
    )
    macro_over: list[str] = Field(
        default_factory=list,
        description="Hierarchical macro average: mean over the first column's groups of the "
        "mean over the next column's groups (OVO-Bench: [ovo_category, ovo_task]).",
    )
    recall_thresholds: list[float] = Field(
        default_factory=lambda: [0.3, 0.5, 0.7],
        description="IoU thresholds for R@k of grounding tasks.",
    )
    recall_strict: bool = Field(
        False, description="R@k counts IoU > k (TVGBench) instead of IoU >= k (Charades-STA)."
    )

    @field_validator("recall_thresholds")
    @classmethod
    def _thresholds_in_unit_interval(cls, value: list[float]) -> list[float]:
        bad = [t for t in value if not 0.0 < t <= 1.0]
        if bad:
            raise ValueError(f"recall thresholds must be in (0, 1], got {bad}")
        return value


class GenerationParams(StrictModel):
    """Sampling parameters, the same for every backend (temperature 0 = greedy)."""

    temperature: float = Field(0.0, ge=0, le=5, description="0 means greedy decoding.")
    top_p: float = Field(1.0, gt=0, le=1)
    top_k: int | None = Field(None, ge=1, description="None: no top-k filtering.")
    max_new_tokens: int = Field(1024, ge=1, le=131072)
    repetition_penalty: float = Field(1.0, gt=0, le=10)
    presence_penalty: float = Field(0.0, ge=-2, le=2, description="vLLM only.")


class AnnotationSource(StrictModel):
    """Where the annotation file comes from, and how sure we are of it."""

    origin: str = Field(
        ...,
        description="The upstream file, e.g. 'github:org/repo@<commit>/path' or "
        "'hf://org/name@<revision>/file'.",
    )
    sha256: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{64}$",
        description="sha256 of the annotation file; a local file that differs is refused.",
    )
    verified: bool = Field(
        False,
        description="True when the origin was checked against the upstream file: its "
        "repository, commit, path and columns (and sha256, where one is given); False marks "
        "them as best knowledge, not checked. The note says what was seen where.",
    )
    note: str | None = Field(None, description="What was and was not verified.")


class FixtureRef(StrictModel):
    """A three-row file in the source's exact layout, with tiny media (paths: spec-relative)."""

    path: str = Field(..., description="Fixture rows (JSON/JSONL/Parquet).")
    media_root: str = Field(..., description="Folder the fixture's media paths resolve against.")


class EvalSection(StrictModel):
    """The evaluation-only part of a spec (the ``eval:`` key)."""

    benchmark: str | None = Field(None, description="Display name, e.g. 'Video-MME'.")
    group: str | None = Field(
        None, description="Benchmark family for reports, e.g. 'General', 'Long video'."
    )
    annotations: AnnotationLayout = Field(default_factory=AnnotationLayout)
    metrics: MetricsSpec = Field(default_factory=MetricsSpec)
    generation: GenerationParams = Field(default_factory=GenerationParams)
    variant: Variant = Field("standard", description="Robustness control; see Variant.")
    source: AnnotationSource | None = None
    fixture: FixtureRef | None = None

    @model_validator(mode="after")
    def _macro_needs_its_columns(self) -> EvalSection:
        if self.metrics.primary == "macro" and not self.metrics.macro_over:
            raise ValueError("metrics: primary 'macro' needs metrics.macro_over")
        return self
