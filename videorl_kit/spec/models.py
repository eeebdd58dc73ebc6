"""Pydantic models for a task spec.

Every field is documented where it is defined; unknown keys are errors. The models
check single fields and simple invariants; cross-cutting checks (verifier exists and
fits the problem type, template compiles) live in :mod:`videorl_kit.spec.loader`.

Example:
    >>> spec = TaskSpec.model_validate({
    ...     "id": "demo-count", "version": 1, "problem_type": "numerical",
    ...     "data": {"path": "rows.jsonl"},
    ...     "prompt": {"template": "{{ question }}"},
    ... })
    >>> spec.budget.video.fps, spec.reward.weights.accuracy
    (2.0, 0.9)
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, PrivateAttr, field_validator, model_validator

from videorl_kit.core.budget import ImageBudget, VideoBudget
from videorl_kit.core.problem_types import FROM_ROW, ProblemType, canonical_problem_type
from videorl_kit.core.reward_rules import AnswerSource, FormatRule, RewardWeights
from videorl_kit.core.safe_text import control_characters
from videorl_kit.core.strict_model import StrictModel
from videorl_kit.hf.errors import HubError
from videorl_kit.hf.refs import check_revision, format_hf_uri, normalize_repo_path
from videorl_kit.spec.eval_section import EvalSection
from videorl_kit.spec.paths import PathRoots, find_spec_root, root_folders

DATA_TYPES: tuple[str, ...] = ("video", "image", "text")
"""Values of a row's ``data_type`` column (EasyVideoR1, Video-R1 and OneThinker use these)."""

WhereScalar = str | int | float | bool | None
ProblemTypeName = Annotated[ProblemType, BeforeValidator(lambda v: canonical_problem_type(str(v)))]
"""A canonical problem type, written as its name or one of its aliases."""


def canonical_task_type(value: Any) -> Any:
    """A spec's ``problem_type``: ``"from_row"`` or a canonical :class:`ProblemType`.

    Example:
        >>> canonical_task_type("From_Row"), canonical_task_type("multiple choice").value
        ('from_row', 'multiple_choice')
    """
    if isinstance(value, str) and value.strip().lower() == FROM_ROW:
        return FROM_ROW
    return canonical_problem_type(value) if isinstance(value, str) else value


class FieldMap(StrictModel):
    """Which column of a data row holds each part of a sample (EasyVideoR1 names by default)."""

    question: str = Field("problem", description="Column with the question text.")
    answer: str = Field("answer", description="Column with the ground-truth answer.")
    videos: str = Field("videos", description="Column with a list of video paths.")
    images: str = Field("images", description="Column with a list of image paths.")
    media: str | None = Field(
        None,
        description="Column with media path(s) whose modality is the row's data_type "
        "(the public sets' 'path'); None: no such column.",
    )
    options: str = Field("options", description="Column with multiple-choice options.")
    id: str = Field("id", description="Column with a stable sample id (row index if absent).")
    problem_type: str = Field("problem_type", description="Column with a per-row problem type.")
    data_type: str = Field("data_type", description="Column with 'video', 'image' or 'text'.")


class HubData(StrictModel):
    """A data file inside a Hub dataset repo, pinned to a revision."""

    repo: str = Field(..., description="Dataset repo id, 'org/name'.", pattern=r"^[\w.-]+/[\w.-]+$")
    revision: str = Field(..., description="Commit sha (or tag) to pin; recorded in results.")
    split: str = Field("train", description="Split name, used in sample ids and reports.")
    file: str = Field(..., description="Path of the JSONL/JSON/Parquet file inside the repo.")

    @field_validator("revision")
    @classmethod
    def _git_ref(cls, value: str) -> str:
        try:
            return check_revision(value)
        except HubError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("split")
    @classmethod
    def _one_line(cls, value: str) -> str:
        bad = control_characters(value)
        if bad:  # it names sample ids, reports and printed commands
            raise ValueError(
                f"has a control character ({', '.join(bad)}): a split name is one line of text"
            )
        return value

    @field_validator("file")
    @classmethod
    def _inside_the_repo(cls, value: str) -> str:
        try:
            normalize_repo_path(value, what="file")
        except HubError as exc:
            raise ValueError(str(exc)) from None
        return value

    @property
    def uri(self) -> str:
        """The file as an ``hf://`` URI at the pinned revision.

        Example:
            >>> HubData(repo="org/name", revision="v1", file="rows.jsonl").uri
            'hf://org/name@v1/rows.jsonl'
        """
        return format_hf_uri(self.repo, self.revision, self.file)


class DataSpec(StrictModel):
    """Where the rows come from and how to read them."""

    path: str | None = Field(
        None, description="Local JSONL/JSON/Parquet file, relative to the spec."
    )
    hub: HubData | None = Field(None, description="A file in a Hub dataset repo (instead of path).")
    media_root: str | None = Field(
        None, description="Folder that relative media paths resolve against (relative to the spec)."
    )
    fields: FieldMap = Field(default_factory=FieldMap, description="Column names of the rows.")
    where: dict[str, WhereScalar | list[WhereScalar]] = Field(
        default_factory=dict,
        description="Keep only rows whose columns equal a value or one of a list of values; "
        "problem types compare canonically (aliases match).",
    )
    limit: int | None = Field(None, ge=1, description="Use only the first N (kept) rows.")
    layout: Literal["charades_sta", "got10k", "nextgqa"] | None = Field(
        None,
        description="Read data.path in a public source set's own layout instead of as rows "
        "(see videorl_kit.spec.source_layouts): charades_sta (a 'video start end##sentence' "
        "text file), got10k (a split's list.txt of sequence folders; needs frames_fps), "
        "nextgqa (NExT-GQA's val.csv/test.csv beside gsub_*.json).",
    )
    frames_fps: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="Frames per second of the videos stored as folders of numbered frame "
        "images (GoT-10k, LaSOT): a row's video path may then name such a folder, decoded "
        "and cached like a video file with timestamps i / frames_fps.",
    )
    allow_absolute_paths: bool = Field(
        False,
        description="Let data.path, media_root and the rows' media paths be absolute (or links) "
        "outside the spec's root, e.g. videos on a shared disk. Refused in specs from the Hub.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> DataSpec:
        if (self.path is None) == (self.hub is None):
            raise ValueError("path: give exactly one of data.path or data.hub")
        return self

    @model_validator(mode="after")
    def _layout_needs(self) -> DataSpec:
        if self.layout == "got10k" and self.frames_fps is None:
            raise ValueError(
                "frames_fps: layout got10k reads videos stored as frame folders; "
                "give their fps (GoT-10k: 10)"
            )
        return self

    @model_validator(mode="after")
    def _known_where_values(self) -> DataSpec:
        for column, wanted in self.where.items():
            values = wanted if isinstance(wanted, list) else [wanted]
            if not values:
                raise ValueError(f"where: {column}: give a value or a non-empty list of values")
            if column == self.fields.problem_type:
                for value in values:
                    try:
                        canonical_problem_type(str(value))
                    except ValueError as exc:
                        raise ValueError(f"where: {column}: {exc}") from None
        return self


class BudgetSpec(StrictModel):
    """Pixel and frame budgets per modality, shared by cache, training and evaluation."""

    video: VideoBudget = Field(default_factory=VideoBudget)
    image: ImageBudget = Field(default_factory=ImageBudget)


class VerifierRef(StrictModel):
    """A registered verifier, by name and version, with its parameters (never code)."""

    name: str = Field(..., description="Registered verifier name, e.g. 'numeric'.")
    version: int | None = Field(
        None,
        ge=1,
        description=(
            "Verifier version; a bump means new semantics. Left out: the newest version, which "
            "the loader fills in. A retired version is an error naming what changed."
        ),
    )
    params: dict[str, Any] = Field(default_factory=dict, description="Verifier parameters.")


class RewardSpec(StrictModel):
    """How the reward is assembled from accuracy and format, and what text is graded."""

    format: FormatRule = Field(
        "answer_tag",
        description="'answer_tag': one <answer>…</answer>, optionally after one <think>…</think>.",
    )
    weights: RewardWeights = Field(default_factory=RewardWeights)
    answer_source: AnswerSource = Field(
        "auto",
        description=(
            "What the verifier grades. 'auto': the <answer> block when there is one, else the "
            "final statement after the reasoning ('the answer is X', 'Final answer: X', "
            "\\boxed{X}), else the text outside <think>. 'answer_tag': only the <answer> block, "
            "with no fallback (a response without one has no answer and scores accuracy 0), "
            "the stricter rule of recipes that reward the tagged answer only."
        ),
    )


class PromptSpec(StrictModel):
    """Prompt template (sandboxed Jinja; variables: question, options, problem_type, row)."""

    template: str = Field(..., min_length=1, description="Jinja template of the user turn.")
    system: str | None = Field(None, description="Optional system message.")


class TaskSpec(StrictModel):
    """A task: problem type, data, budgets, verifier, reward and prompt.

    ``source_file`` (where the spec was read from) and ``provenance`` (Hub files and the
    revisions they were resolved to) are attached by the loader and are not part of the data.
    """

    id: str = Field(..., pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", description="Unique lower-kebab id.")
    version: int = Field(..., ge=1, description="Spec version; bump on any change of meaning.")
    description: str | None = Field(None, description="One paragraph on what the task measures.")
    tags: list[str] = Field(default_factory=list, description="Labels for selection, e.g. 'synth'.")
    problem_type: ProblemType | Literal["from_row"] = Field(
        ...,
        description="One of the canonical problem types, or 'from_row': each row's own "
        "problem type (column fields.problem_type) picks its verifier.",
    )
    data: DataSpec
    budget: BudgetSpec = Field(default_factory=BudgetSpec)
    verifier: VerifierRef | None = Field(
        None, description="Verifier; defaults to the problem type's standard verifier."
    )
    verifiers: dict[ProblemTypeName, VerifierRef] = Field(
        default_factory=dict,
        description="With problem_type from_row: the verifier per problem type (aliases "
        "accepted); types not listed use their standard verifier.",
    )
    reward: RewardSpec = Field(default_factory=RewardSpec)
    prompt: PromptSpec
    eval: EvalSection | None = Field(
        None, description="Evaluation-only settings (videorl_kit.spec.eval_section)."
    )

    _source_file: Path | None = PrivateAttr(None)
    _provenance: list[dict[str, str]] = PrivateAttr(default_factory=list)

    @field_validator("problem_type", mode="before")
    @classmethod
    def _canonical_type(cls, value: Any) -> Any:
        return canonical_task_type(value)

    @field_validator("verifiers", mode="before")
    @classmethod
    def _one_entry_per_type(cls, value: Any) -> Any:
        if isinstance(value, dict):
            seen: dict[ProblemType, str] = {}
            for key in value:
                try:
                    ptype = canonical_problem_type(str(key))
                except ValueError:
                    continue  # reported at the key by the key's own validator
                if ptype in seen:
                    raise ValueError(
                        f"{key!r} and {seen[ptype]!r} both name problem type {ptype.value!r}"
                    )
                seen[ptype] = str(key)
        return value

    @model_validator(mode="after")
    def _one_verifier_source(self) -> TaskSpec:
        if self.problem_type == FROM_ROW and self.verifier is not None:
            raise ValueError(
                "verifier: with problem_type from_row, give the verifier of each problem type "
                "under verifiers: {TYPE: {name: ..., version: ..., params: ...}}"
            )
        if self.problem_type != FROM_ROW and self.verifiers:
            raise ValueError(
                "verifiers: a map of verifiers needs problem_type: from_row; this spec has one "
                "problem type, so give its verifier under verifier:"
            )
        return self

    @property
    def routes_per_row(self) -> bool:
        """Whether each row's own problem type picks its verifier (``problem_type: from_row``)."""
        return self.problem_type == FROM_ROW

    @property
    def source_file(self) -> Path | None:
        """The YAML file this spec was loaded from (None when built in code)."""
        return self._source_file

    @property
    def provenance(self) -> list[dict[str, str]]:
        """Hub files this spec was built from, with the exact revisions used."""
        return list(self._provenance)

    def with_provenance(self, records: list[dict[str, str]]) -> TaskSpec:
        """A copy of this spec that also records ``records`` (Hub files and their revisions).

        Example:
            >>> spec = TaskSpec.model_validate({"id": "a", "version": 1, "problem_type": "ocr",
            ...     "data": {"path": "x.jsonl"}, "prompt": {"template": "{{ question }}"}})
            >>> spec.with_provenance([{"repo": "o/n", "revision": "abc"}]).provenance[0]["repo"]
            'o/n'
        """
        copy = self.model_copy()
        copy._provenance = [*self._provenance, *records]
        return copy

    def resolve(self, relative: str, field: str = "path") -> Path:
        """Resolve ``relative`` against the spec's folder, inside the spec's root.

        A spec loaded from a file may only name paths inside its root (see
        :mod:`videorl_kit.spec.paths`); :class:`~videorl_kit.spec.paths.PathRefused` says which
        ``field`` left it. A spec built in code resolves against the working directory.

        Example:
            >>> spec = TaskSpec.model_validate({"id": "a", "version": 1, "problem_type": "ocr",
            ...     "data": {"path": "x.jsonl"}, "prompt": {"template": "{{ question }}"}})
            >>> spec.resolve("x.jsonl").name
            'x.jsonl'
        """
        if self._source_file is None:
            return Path(relative)
        folders = root_folders(find_spec_root(self._source_file))
        roots = PathRoots(folders, allow_absolute=self.data.allow_absolute_paths)
        return roots.resolve(relative, base=self._source_file.parent, field=field)

    def resolved_dict(self) -> dict[str, Any]:
        """The spec as pure JSON-compatible data, with the default verifier filled in."""
        return self.model_dump(mode="json")
