"""Training recipes: YAML validated exactly like task specs, then resolved against the table.

A recipe names the model, the tasks (spec files or globs, with mixing weights), the frame
store, the algorithm (by name, with parameters), the rollout, the optimiser, the backend (with
one section per backend), the output folder, the seed and the logging. It is read with the
spec loader's machinery: ``include:`` (local keys win, cycles refused), unknown keys refused
with "did you mean", and every problem of the recipe and of every spec it names reported at
once as ``file:line: field.path: message``. Paths inside a recipe are relative to its file.

**Recipe or task spec?** ``validate`` treats a YAML file as a recipe when its top level (after
includes) says ``kind: recipe`` or has a ``tasks`` or an ``algorithm`` key; a task spec never
has those (:func:`is_recipe_document`).

**A backend's rules.** What only one engine refuses (OpenRLHF's cluster sizing, its extra
flags, its bundle folder; TRL's trainers) is that backend's to say: :func:`load_recipe` asks the
recipe's backend for its ``problems`` when it is given the backends (``backends=``, as the CLI's
``validate`` and ``train`` do) and reports them with the recipe's own problems, all at once, each
at its file, line and field path. Without ``backends`` a recipe is checked for what holds on
every backend.

Example:
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "r.yaml").write_text(
    ...     "id: demo\\nmodel: tiny:qwen2.5-vl\\nstore: store\\noutput_dir: runs/demo\\n"
    ...     "tasks: [missing.yaml]\\nalgorithm: {name: grop}\\n"
    ...     "optim: {prompts_per_step: 2, micro_batch_size: 4, steps: 3}\\n")
    >>> try:
    ...     load_recipe(d / "r.yaml")
    ... except SpecError as err:
    ...     print(*[f"{i.line} {i.path}: {i.message[:28]}" for i in err.issues], sep="\\n")
    5 tasks.0.spec: spec file not found: missing
    6 algorithm.name: unknown algorithm 'grop'; di
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import Field, field_validator, model_validator

from videorl_kit.core.strict_model import StrictModel
from videorl_kit.hf.refs import HF_SCHEME
from videorl_kit.spec.loader import SpecError, is_base_file, load_spec, model_issues
from videorl_kit.spec.models import TaskSpec
from videorl_kit.spec.yaml_source import (
    SpecIssue,
    SpecLoadError,
    YamlDocument,
    load_yaml_with_includes,
)
from videorl_kit.train.algorithms import (
    BACKENDS,
    AlgorithmParams,
    backend_options,
    canonical_algorithm,
    param_problems,
    resolve_params,
    unknown_algorithm_message,
)
from videorl_kit.train.offline.section import OfflineSection, offline_problems
from videorl_kit.train.script_values import (
    RayAddress,
    ScriptArgs,
    ScriptText,
    hf_model_problem,
)
from videorl_kit.train.tiny_model import FAMILIES, TINY_PREFIX, patch_factor

RECIPE_KEYS = ("tasks", "algorithm")
"""Top-level keys only a recipe has (with ``kind: recipe``): how ``validate`` tells them apart."""


class TaskRef(StrictModel):
    """A task spec (a file, a glob or an ``hf://`` URI) and its mixing weight.

    A bare string in ``tasks:`` means ``{spec: <string>, weight: 1}``. A glob gives every
    spec it matches (``_`` bases skipped) the same weight. A task's prompts are drawn with
    probability weight / (sum of weights).
    """

    spec: ScriptText = Field(..., min_length=1, description="Spec file, glob or hf:// URI.")
    weight: float = Field(1.0, gt=0, description="Mixing weight of the task's prompts.")


class AlgorithmSpec(StrictModel):
    """The algorithm by name (see ``docs/algorithms.md``) and its parameters."""

    name: str = Field("grpo", description="grpo, dapo, gspo, dr_grpo, rloo, reinforce_pp, ...")
    params: AlgorithmParams = Field(default_factory=AlgorithmParams)


class RolloutSpec(StrictModel):
    """How completions are sampled."""

    group_size: int = Field(8, ge=2, description="Completions per prompt (the GRPO group).")
    max_new_tokens: int = Field(512, ge=1, description="Longest completion, in tokens.")
    temperature: float = Field(1.0, gt=0, description="Sampling temperature.")
    top_p: float = Field(1.0, gt=0, le=1, description="Nucleus sampling threshold.")


class OptimSpec(StrictModel):
    """Optimiser, schedule and batch sizes (global counts, whatever the number of devices)."""

    lr: float = Field(1e-6, gt=0, description="AdamW learning rate.")
    schedule: Literal["constant", "linear", "cosine"] = Field(
        "constant", description="Learning-rate schedule after the warm-up."
    )
    warmup_ratio: float = Field(0.0, ge=0, lt=1, description="Share of steps warming up.")
    weight_decay: float = Field(0.0, ge=0, description="AdamW weight decay.")
    max_grad_norm: float = Field(1.0, gt=0, description="Gradient clipping norm.")
    prompts_per_step: int = Field(..., ge=1, description="Prompts per optimiser step.")
    micro_batch_size: int = Field(
        ..., ge=1, description="Completions per device in one forward/backward pass."
    )
    steps: int = Field(..., ge=1, description="Optimiser steps to train.")


class LoggingSpec(StrictModel):
    """Where metrics go; ``metrics.jsonl`` in the output folder is always written."""

    every_steps: int = Field(1, ge=1, description="Log every N optimiser steps.")
    tensorboard: bool = Field(False, description="Also log to TensorBoard (must be installed).")
    wandb: bool = Field(False, description="Also log to Weights & Biases (must be installed).")
    wandb_project: ScriptText | None = Field(
        None, description="W&B project (default: the recipe id)."
    )
    breakdown: list[str] = Field(
        default_factory=lambda: ["problem_type", "data_source"],
        description="Row columns whose values each task's reward, accuracy and format are also "
        "logged by (problem_type for mixed from_row tasks; any column of the data rows).",
    )
    completions_every: int = Field(
        10, ge=0, description="Write sampled completions to completions.jsonl at step 1 and "
        "every N steps (0: never).",
    )  # fmt: skip
    completions_per_step: int = Field(
        8, ge=1, description="Completions written per task at each such step."
    )


class TrlSection(StrictModel):
    """Settings only the TRL backend reads."""

    use_vllm: bool = Field(False, description="Generate with vLLM (GPU only).")
    vllm_mode: Literal["colocate", "server"] = Field("colocate", description="vLLM placement.")
    bf16: bool | None = Field(None, description="bfloat16 training (default: on with a GPU).")
    gradient_checkpointing: bool = Field(False, description="Trade compute for memory.")
    save_steps: int = Field(50, ge=1, description="Save a checkpoint every N steps.")
    save_total_limit: int | None = Field(2, ge=1, description="Checkpoints kept (None: all).")
    video: Literal["native", "frames_as_images"] | None = Field(
        None,
        description="How videos reach the model: native (its video processor: temporal patches, "
        "timing on the M-RoPE axis) or frames_as_images (one image per frame after its "
        "timestamp). Default: native for Qwen2.5-VL and Qwen3-VL, frames_as_images otherwise.",
    )
    balance_vision: bool | None = Field(
        None,
        description="Run the vision tower on a zero dummy for each modality a micro-batch lacks, "
        "so ZeRO-3 / FSDP ranks stay in step. Default: on when training on more than one process.",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="More GRPOConfig/RLOOConfig fields, checked against TRL's own dataclass; "
        "fields the algorithm or the recipe already sets are refused.",
    )


class OpenRLHFSection(StrictModel):
    """Settings only the OpenRLHF backend reads: cluster sizing for Ray, vLLM and DeepSpeed."""

    nodes: int = Field(1, ge=1, description="Ray nodes.")
    gpus_per_node: int = Field(8, ge=1, description="GPUs per node.")
    vllm_engines: int = Field(8, ge=1, description="vLLM rollout engines.")
    vllm_tensor_parallel_size: int = Field(1, ge=1, description="GPUs per vLLM engine.")
    vllm_gpu_memory_utilization: float = Field(
        0.6, gt=0, le=1, description="Share of GPU memory vLLM may take."
    )
    colocate: bool = Field(
        True, description="Hybrid engine: actor, reference and vLLM share the GPUs (with sleep)."
    )
    zero_stage: Literal[0, 1, 2, 3] = Field(3, description="DeepSpeed ZeRO stage.")
    video: Literal["frames_as_images", "native"] = Field(
        "frames_as_images", description="How videos reach OpenRLHF (see its adapter's docs)."
    )
    ray_address: RayAddress | None = Field(
        None, description="Ray job address: http(s)://HOST:PORT, ray://HOST:PORT or auto."
    )
    extra_args: ScriptArgs = Field(
        default_factory=dict,
        description="More OpenRLHF dotted flags, e.g. {--ds.param_dtype: bf16}.",
    )


class Recipe(StrictModel):
    """A training recipe; ``docs/training.md`` describes every field."""

    kind: Literal["recipe"] = Field("recipe", description="Marks the file as a recipe.")
    id: str = Field(..., pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", description="Lower-kebab name.")
    description: str | None = Field(None, description="What the recipe trains, and why.")
    model: ScriptText = Field(
        ...,
        min_length=1,
        description="A local model folder, hf://ORG/NAME[@REVISION], or tiny:qwen2.5-vl / "
        "tiny:qwen3-vl (a tiny random model written into the run).",
    )
    tasks: list[TaskRef] = Field(..., min_length=1, description="Task specs and weights.")
    store: ScriptText = Field(
        ..., min_length=1, description="Frame store folder (build-cache --store)."
    )
    algorithm: AlgorithmSpec = Field(default_factory=AlgorithmSpec)
    rollout: RolloutSpec = Field(default_factory=RolloutSpec)
    optim: OptimSpec
    backend: Literal["trl", "openrlhf"] = Field("trl", description="Training engine.")
    trl: TrlSection = Field(default_factory=TrlSection)
    openrlhf: OpenRLHFSection = Field(default_factory=OpenRLHFSection)
    output_dir: ScriptText = Field(
        ..., min_length=1, description="Run folder (checkpoints, metrics)."
    )
    offline: OfflineSection | None = Field(
        None, description="Mix stored trajectories into GRPO groups (videorl_kit.train.offline)."
    )
    seed: int = Field(0, ge=0, description="Seed of sampling, shuffling and tiny weights.")
    logging: LoggingSpec = Field(default_factory=LoggingSpec)

    @field_validator("tasks", mode="before")
    @classmethod
    def _bare_paths(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"spec": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        if value.startswith(TINY_PREFIX) and value[len(TINY_PREFIX) :] not in FAMILIES:
            choices = " or ".join(f"{TINY_PREFIX}{f}" for f in FAMILIES)
            raise ValueError(f"unknown tiny model {value!r}; choose {choices}")
        problem = hf_model_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _whole_batches(self) -> Recipe:
        completions = self.optim.prompts_per_step * self.rollout.group_size
        if completions % self.optim.micro_batch_size:
            raise ValueError(
                f"optim: micro_batch_size {self.optim.micro_batch_size} must divide "
                f"prompts_per_step × rollout.group_size = {completions}"
            )
        return self


@dataclass(frozen=True)
class TaskEntry:
    """One task of a loaded recipe: its spec, weight and where the recipe names it."""

    spec: TaskSpec
    weight: float
    given_as: str


@dataclass(frozen=True)
class LoadedRecipe:
    """A validated recipe with its specs loaded and its algorithm resolved for the backend."""

    recipe: Recipe
    path: Path
    tasks: list[TaskEntry]
    params: dict[str, Any]
    options: dict[str, Any]

    @property
    def algorithm(self) -> str:
        """The algorithm's name in the table (aliases resolved)."""
        return self.recipe.algorithm.name

    @property
    def backend(self) -> str:
        """The backend the recipe was checked against."""
        return self.recipe.backend

    def resolve(self, relative: str) -> Path:
        """A path of the recipe, relative to its folder (absolute paths pass through)."""
        path = Path(relative)
        return path if path.is_absolute() else self.path.parent / path

    def resolved_dict(self) -> dict[str, Any]:
        """The recipe with every default, the algorithm's parameters and the backend options.

        Example:
            >>> loaded = load_recipe("recipes/tiny-grpo.yaml")
            >>> loaded.resolved_dict()["algorithm"]["params"]["clip_low"]
            0.2
        """
        data = self.recipe.model_dump(mode="json")
        data["algorithm"] = {
            "name": self.recipe.algorithm.name,
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in self.params.items()},
            "backend_options": self.options,
        }
        data["tasks"] = [
            {"spec": entry.given_as, "id": entry.spec.id, "weight": entry.weight}
            for entry in self.tasks
        ]
        return data


class RecipeChecks(Protocol):
    """What recipe validation asks of a training backend (part of
    :class:`~videorl_kit.train.run.TrainBackend`)."""

    def problems(self, loaded: LoadedRecipe) -> list[tuple[str, str]]:
        """``(dotted field path, message)`` for each thing of ``loaded`` this backend cannot
        run, e.g. ``("openrlhf.vllm_engines", "...")``; nothing when it can. A path names a
        recipe field (a key holding dots, such as an extra flag, is matched whole)."""
        ...


BackendChecks = Mapping[str, Callable[[], RecipeChecks]]
"""The backends recipe validation may ask, by name: a factory each (the CLI's own backends)."""


def is_recipe_document(path: str | Path) -> bool:
    """Whether ``path`` is a training recipe rather than a task spec.

    The rule: after includes, the top level says ``kind: recipe`` or has a ``tasks`` or an
    ``algorithm`` key. A file that cannot be read is not a recipe (loading it as a spec then
    reports why).

    Example:
        >>> is_recipe_document("recipes/tiny-grpo.yaml")
        True
        >>> is_recipe_document("task_specs/synth-count.yaml")
        False
    """
    try:
        data = load_yaml_with_includes(path).data
    except SpecLoadError:
        return False
    return data.get("kind") == "recipe" or any(key in data for key in RECIPE_KEYS)


def _at(doc: YamlDocument, path: tuple[Any, ...], message: str) -> SpecIssue:
    file, line = doc.origin(path)
    return SpecIssue(file, line, ".".join(str(p) for p in path), message)


def _expand(entry: str, folder: Path) -> list[str]:
    """The spec files an entry of ``tasks`` names (a glob may name none)."""
    if entry.startswith(HF_SCHEME):
        return [entry]
    pattern = entry if Path(entry).is_absolute() else str(folder / entry)
    if not glob.has_magic(pattern):
        return [pattern]
    return sorted(p for p in glob.glob(pattern, recursive=True) if not is_base_file(p))


def _task_issues(
    doc: YamlDocument, recipe: Recipe, folder: Path
) -> tuple[list[TaskEntry], list[SpecIssue]]:
    tasks: list[TaskEntry] = []
    issues: list[SpecIssue] = []
    seen: dict[str, int] = {}
    for index, ref in enumerate(recipe.tasks):
        where = ("tasks", index, "spec")
        files = _expand(ref.spec, folder)
        if not files:
            issues.append(_at(doc, where, f"no spec file matches {ref.spec!r}"))
        for file in files:
            if not file.startswith(HF_SCHEME) and not Path(file).is_file():
                issues.append(
                    _at(doc, where, f"spec file not found: {ref.spec} (looked for {file})")
                )
                continue
            try:
                spec = load_spec(file)
            except SpecError as exc:
                issues.extend(exc.issues)
                continue
            if spec.id in seen:
                issues.append(
                    _at(doc, where, f"task {spec.id!r} is already listed (tasks.{seen[spec.id]})")
                )
                continue
            seen[spec.id] = index
            tasks.append(TaskEntry(spec, ref.weight, ref.spec))
            issues.extend(_patch_issues(doc, where, recipe.model, spec))
    return tasks, issues


def _patch_issues(
    doc: YamlDocument, where: tuple[Any, ...], model: str, spec: TaskSpec
) -> list[SpecIssue]:
    """A tiny model's resize factor must match the budgets its frames were cached under."""
    if not model.startswith(TINY_PREFIX):
        return []  # other models are checked against their processor when training starts
    factor = patch_factor(model[len(TINY_PREFIX) :])
    issues = []
    for modality in ("video", "image"):
        patch = getattr(spec.budget, modality).patch
        if patch != factor:
            issues.append(
                _at(
                    doc,
                    where,
                    f"task {spec.id!r}: budget.{modality}.patch {patch} does not fit {model} "
                    f"(resize factor {factor}); set `patch: {factor}` in the spec's budget",
                )
            )
    return issues


def _algorithm_issues(
    doc: YamlDocument, recipe: Recipe, backend: str
) -> tuple[str, dict[str, Any], dict[str, Any], list[SpecIssue]]:
    name = canonical_algorithm(recipe.algorithm.name)
    if name is None:
        message = unknown_algorithm_message(recipe.algorithm.name)
        return "", {}, {}, [_at(doc, ("algorithm", "name"), message)]
    given = recipe.algorithm.params.model_dump(exclude_none=True)

    def where(param: str | None) -> tuple[Any, ...]:
        return ("algorithm", "params", param) if param in given else ("algorithm", "name")

    max_new = recipe.rollout.max_new_tokens
    params = resolve_params(name, given, max_new_tokens=max_new)
    problems = param_problems(params, max_new_tokens=max_new)
    if problems:
        return name, {}, {}, [_at(doc, where(p), m) for p, m in problems]
    options, refused = backend_options(name, params, backend)
    return name, params, options, [_at(doc, where(p.param), p.message) for p in refused]


def load_recipe(
    path: str | Path,
    *,
    backend: str | None = None,
    output_dir: bool = True,
    backends: BackendChecks | None = None,
) -> LoadedRecipe:
    """Read, merge (``include:``) and validate a recipe and every task spec it names.

    ``backend`` overrides the recipe's ``backend`` (``train --backend``); the algorithm and its
    parameters are checked against the backend used. ``backends``: the backends by name (a
    factory each); the one the recipe uses adds its ``problems`` (see :class:`RecipeChecks`),
    reported with the rest. Without it, no backend's own rules are checked. ``output_dir=False``:
    the recipe's output folder is replaced (``train --output``), so a backend's problems with
    the ``output_dir`` field are not reported here (the backend checks the folder it writes).
    Raises :class:`SpecError` listing every problem, each as ``file:line: field.path: message``.

    Example:
        >>> loaded = load_recipe("recipes/tiny-grpo.yaml")
        >>> [t.spec.id for t in loaded.tasks][:2], loaded.algorithm
        (['tiny-count', 'tiny-multiple-choice'], 'grpo')
    """
    try:
        doc = load_yaml_with_includes(path)
    except SpecLoadError as exc:
        raise SpecError(exc.issues) from None
    if backend is not None:
        if backend not in BACKENDS:
            raise SpecError([SpecIssue(doc.file, 1, "backend", _unknown_backend(backend))])
        doc.data["backend"] = backend
    issues = model_issues(doc, Recipe)
    if issues:
        raise SpecError(sorted(issues, key=lambda i: (i.file != doc.file, i.file, i.line)))
    recipe = Recipe.model_validate(doc.data)
    folder = doc.root_path.parent
    name, params, options, algorithm_issues = _algorithm_issues(doc, recipe, recipe.backend)
    tasks, task_issues = _task_issues(doc, recipe, folder)
    offline_issues = [  # the offline section across its fields (no store needed)
        _at(doc, _field_path(doc, path), message) for path, message in offline_problems(recipe)
    ]
    if name and recipe.algorithm.name != name:
        recipe = recipe.model_copy(
            update={"algorithm": recipe.algorithm.model_copy(update={"name": name})}
        )
    loaded = LoadedRecipe(recipe, doc.root_path, tasks, params, options)
    backend_issues = [
        _at(doc, _field_path(doc, path), message)
        for path, message in _backend_problems(loaded, backends)
        if output_dir or path.split(".", 1)[0] != "output_dir"
    ]
    issues = [*algorithm_issues, *task_issues, *offline_issues, *backend_issues]
    if issues:
        raise SpecError(sorted(issues, key=lambda i: (i.file != doc.file, i.file, i.line)))
    return loaded


def _backend_problems(
    loaded: LoadedRecipe, backends: BackendChecks | None
) -> list[tuple[str, str]]:
    """The recipe's backend's ``problems`` (none when that backend is not given)."""
    factory = (backends or {}).get(loaded.backend)
    return [] if factory is None else list(factory().problems(loaded))


def _field_path(doc: YamlDocument, dotted: str) -> tuple[Any, ...]:
    """The key path of ``doc`` a dotted field path names: keys of the document are matched
    whole, even when they hold dots (``openrlhf.extra_args.--ds.param_dtype``); list items by
    their index. Past the document's keys (a field left at its default) the rest is split at
    its dots.

    Example:
        >>> doc = load_yaml_with_includes("recipes/tiny-grpo.yaml")
        >>> _field_path(doc, "tasks.0.spec"), _field_path(doc, "openrlhf.extra_args.--a.b")
        (('tasks', 0, 'spec'), ('openrlhf', 'extra_args', '--a', 'b'))
    """
    parts: list[Any] = []
    rest = dotted
    while rest:
        depth = len(parts)
        children = {k[depth] for k in doc.origins if len(k) > depth and list(k[:depth]) == parts}
        fits = [k for k in children if rest == str(k) or rest.startswith(f"{k}.")]
        if not fits:
            return (*parts, *rest.split("."))
        key = max(fits, key=lambda k: len(str(k)))
        parts.append(key)
        rest = rest[len(str(key)) + 1 :]
    return tuple(parts)


def validate_recipe(path: str | Path) -> str:
    """Load the recipe at ``path`` (raising :class:`SpecError`) and return its id.

    Example:
        >>> validate_recipe("recipes/tiny-grpo.yaml")
        'tiny-grpo'
    """
    return load_recipe(path).recipe.id


def _unknown_backend(name: str) -> str:
    return f"unknown backend {name!r} (valid: {', '.join(BACKENDS)})"
