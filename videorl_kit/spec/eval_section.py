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
* ``protocol`` / ``protocols``: the protocol this spec runs (``reasoning``: the spec as
  written; ``official``: the benchmark's own prompt, answer format, generation length and
  frame sampling, declared under ``protocols.official`` as partial sections merged over the
  spec's own, with the file and commit they come from).
* ``judge``: the problem types the benchmark grades with a judge model, and the local judge
  model that grades them (none: those questions are reported as not scored, never as 0).
* ``lmms_eval``: how lmms-eval's logs of this benchmark map onto its rows (the lmms-eval
  task names are one table, ``videorl_kit.eval.lmms_eval_logs.LMMS_EVAL_ALIASES``): whether
  lmms-eval's ``doc_id`` is the row index of the spec's annotation file (its logs then
  replay directly).

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
from typing import Any, Literal, get_args

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
    options: Literal["lettered", "unlettered", "in_question"] = Field(
        "lettered",
        description="'unlettered': the options column holds bare texts, prefixed 'A. ', "
        "'B. ', ... when read; 'in_question': the question ends with one 'A. text' line per "
        "option (TempCompass), split off into the options column when read.",
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


class BlockLabels(StrictModel):
    """A category computed from an integer column laid out in equal blocks: the value ``v``
    gets ``labels[(v - start) // size]`` (MVBench: 20 tasks of 200 ids each, in name order).

    Example:
        >>> BlockLabels(column="problem_id", start=1, size=200, labels=["a", "b"]).label(201)
        'b'
        >>> BlockLabels(column="problem_id", start=1, size=200, labels=["a", "b"]).label(401)
    """

    column: str = Field(..., description="Row column holding the integer.")
    start: int = Field(0, description="The first value of the first block.")
    size: int = Field(..., ge=1, description="Values per block.")
    labels: list[str] = Field(..., min_length=1, description="One label per block, in order.")

    def label(self, value: object) -> str | None:
        """The label of ``value`` (None: not an integer, or outside every block)."""
        if isinstance(value, bool) or not isinstance(value, int):
            if not (isinstance(value, str) and value.strip().lstrip("-").isdigit()):
                return None
            value = int(value)
        index = (value - self.start) // self.size
        return self.labels[index] if 0 <= index < len(self.labels) else None


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
    macro_merge: dict[str, str] = Field(
        default_factory=dict,
        description="Values of the first macro_over column averaged into one group before "
        "the macro (VSI-Bench: its three rel_direction types count as one); the macro over "
        "every value is reported apart as 'macro_unmerged'.",
    )
    derived: dict[str, BlockLabels] = Field(
        default_factory=dict,
        description="Category columns computed from an integer column (see BlockLabels); "
        "categories and macro_over may name them.",
    )

    @model_validator(mode="after")
    def _merge_needs_a_macro(self) -> MetricsSpec:
        if self.macro_merge and not self.macro_over:
            raise ValueError("macro_merge: merging groups needs metrics.macro_over")
        return self

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


ProtocolName = Literal["reasoning", "official"]
"""``reasoning``: the spec as written (think, then ``<answer>``; the kit's budgets);
``official``: the benchmark's own protocol (its ``eval.protocols.official``)."""

PROTOCOLS: tuple[str, ...] = get_args(ProtocolName)


class OfficialProtocol(StrictModel):
    """The benchmark's own protocol: partial spec sections merged over the spec's own.

    Each section is a mapping merged key by key over the spec's section of that name
    (``prompt``, ``budget``, ``reward``, and ``generation``/``metrics``/``judge`` of the
    ``eval:`` section); the merged spec is validated as a whole when the protocol is chosen
    (``validate`` and every load check it too).
    """

    source: str = Field(
        ...,
        min_length=1,
        description="Where the prompt wording, option format, generation length and frame "
        "sampling come from: file(s) and the commit or release they were read at.",
    )
    prompt: dict[str, Any] = Field(default_factory=dict, description="Merged over prompt.")
    budget: dict[str, Any] = Field(default_factory=dict, description="Merged over budget.")
    reward: dict[str, Any] = Field(default_factory=dict, description="Merged over reward.")
    generation: dict[str, Any] = Field(
        default_factory=dict, description="Merged over eval.generation."
    )
    metrics: dict[str, Any] = Field(default_factory=dict, description="Merged over eval.metrics.")
    judge: dict[str, Any] = Field(default_factory=dict, description="Merged over eval.judge.")


JudgeVerdict = Literal["judgement_01", "correct_incorrect"]
"""How a judgement is read: ``judgement_01``: the last ``Judgement: 1`` / ``Judgement: 0``
(else a final ``1`` or ``0``); ``correct_incorrect``: the last ``Correct`` or ``Incorrect``."""


class JudgeSpec(StrictModel):
    """Questions the benchmark grades with a judge model, and the judge that grades them.

    Without a ``model`` those questions are reported as not scored (``n_unscored``), never
    as 0. With one, the judge (a local model folder, run greedy through the transformers or
    vLLM backend) reads ``prompt`` rendered with ``question``, ``options``, ``gold``,
    ``answer`` (the response's final answer) and ``response``; every judgement and its
    prompt are stored in the samples file, from which a replay reuses them.
    """

    problem_types: list[ProblemType] = Field(
        ..., min_length=1, description="Problem types the benchmark grades with a judge."
    )
    model: str | None = Field(
        None, description="Local judge model folder (None: judged questions are not scored)."
    )
    backend: Literal["transformers", "vllm"] = Field("transformers")
    model_args: str | None = Field(
        None,
        description="The vLLM judge's engine arguments, as --model-args takes them (e.g. "
        "'gpu_memory_utilization=0.3' beside a vLLM model under test; "
        "'kv_cache_memory_bytes=64MiB' on the CPU).",
    )
    prompt: str = Field(..., min_length=1, description="Jinja template of the judge's turn.")
    verdict: JudgeVerdict = Field("judgement_01", description="How the judgement is read.")
    max_new_tokens: int = Field(256, ge=1, le=32768)
    source: str | None = Field(None, description="Where the judge prompt comes from.")

    @field_validator("problem_types", mode="before")
    @classmethod
    def _canonical_types(cls, value: object) -> object:
        if isinstance(value, list):
            return [canonical_problem_type(v) if isinstance(v, str) else v for v in value]
        return value


class LmmsEvalLink(StrictModel):
    """How lmms-eval names this benchmark, and how its logged docs map onto the spec's rows."""

    doc_id: Literal["row_index", "none"] = Field(
        "none",
        description="'row_index': lmms-eval's doc_id is the row index of this spec's "
        "annotation file (same file, same order); 'none': it is not (a log line must carry "
        "its doc, matched on doc_key).",
    )
    doc_key: str | None = Field(
        None, description="Column present in both lmms-eval's doc and this spec's rows."
    )
    target: str | None = Field(
        None,
        description="Raw row column equal to lmms-eval's logged target (checks that doc_id "
        "and rows line up).",
    )
    note: str | None = None


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
    protocol: ProtocolName = Field(
        "reasoning", description="The protocol this spec runs (see ProtocolName)."
    )
    protocols: dict[Literal["official"], OfficialProtocol] = Field(
        default_factory=dict, description="The benchmark's own protocol (eval --protocol official)."
    )
    judge: JudgeSpec | None = None
    lmms_eval: LmmsEvalLink | None = None

    @model_validator(mode="after")
    def _macro_needs_its_columns(self) -> EvalSection:
        if self.metrics.primary == "macro" and not self.metrics.macro_over:
            raise ValueError("metrics: primary 'macro' needs metrics.macro_over")
        return self
