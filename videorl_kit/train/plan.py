"""Everything checked before a training run writes a byte: :func:`plan_training`.

A :class:`TrainPlan` is a loaded recipe with the command line's overrides applied, its model
located, its store opened (every task has ready samples cached under the budgets its spec
declares) and its output folder checked (fresh, or a run of the same recipe to resume). Bad
input raises :class:`~videorl_kit.core.errors.UserError` with one line per problem, and nothing
has been written when it does.

Example:
    >>> import tempfile
    >>> from videorl_kit.train.demo import write_demo_recipe
    >>> plan = plan_training(write_demo_recipe(tempfile.mkdtemp()))  # demo task + its store
    >>> plan.samples, plan.model.describe(), plan.output_dir.name
    ({'demo': 4}, 'tiny:qwen2.5-vl', 'demo')
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import quoted
from videorl_kit.hf.refs import HF_SCHEME
from videorl_kit.store import CachedSampleDataset
from videorl_kit.store.errors import rebuild_hint
from videorl_kit.train.offline.select import store_problems
from videorl_kit.train.recipe import BackendChecks, LoadedRecipe, Recipe, load_recipe
from videorl_kit.train.script_values import hf_model_problem, text_problem
from videorl_kit.train.tiny_model import TINY_PREFIX, patch_factor

RESOLVED_RECIPE = "recipe.resolved.yaml"
"""The resolved recipe in a run folder (written first; marks the folder as a run)."""

BASE_MODEL_DIR = "base-model"
PLAN_FILE = "plan.json"
"""Written by ``train --plan`` (its record); a folder holding only it is no conflict."""
DRY_RUN_FILE = "dry_run.json"
"""Left in a run folder by ``train --dry-run`` (the model it was planned with): such a folder,
while nothing has trained in it, is no conflict for the run that follows."""
"""Where a run writes its ``tiny:`` model."""

# Recipe fields a resumed run may change: its length and where things are found.
_RESUMABLE = ("optim.steps", "store", "output_dir")


@dataclass(frozen=True)
class ModelSource:
    """Where the policy's starting weights come from."""

    kind: str  # "tiny" | "local" | "hub"
    name: str  # the family, the folder or the repo id
    revision: str | None = None

    def describe(self) -> str:
        """How the model is named in messages.

        Example:
            >>> ModelSource("hub", "Qwen/Qwen2.5-VL-7B-Instruct", "main").describe()
            'hf://Qwen/Qwen2.5-VL-7B-Instruct@main'
        """
        if self.kind == "tiny":
            return f"{TINY_PREFIX}{self.name}"
        if self.kind == "hub":
            return f"{HF_SCHEME}{self.name}" + (f"@{self.revision}" if self.revision else "")
        return self.name


@dataclass(frozen=True)
class TrainPlan:
    """A checked training run: recipe, model, store, output folder and ready samples per task."""

    loaded: LoadedRecipe
    model: ModelSource
    store: Path
    output_dir: Path
    resume: bool
    samples: dict[str, int]

    @property
    def warnings(self) -> list[str]:
        """What the run may not do as meant (see :func:`data_warnings`)."""
        return data_warnings(self.loaded, self.samples)

    @property
    def recipe(self) -> Recipe:
        """The recipe, overrides applied."""
        return self.loaded.recipe

    @property
    def backend(self) -> str:
        """The backend to train with."""
        return self.loaded.backend

    @property
    def model_name_or_path(self) -> str:
        """What ``from_pretrained`` receives: a folder (a tiny model's is in the run), a repo id."""
        if self.model.kind == "tiny":
            return str(self.output_dir / BASE_MODEL_DIR)
        return self.model.name


def data_warnings(loaded: LoadedRecipe, samples: dict[str, int]) -> list[str]:
    """Warnings when the tasks' ready prompts (``samples``, per task id) cannot feed the recipe
    without repeats: fewer than one step needs, or fewer than its steps consume (the epoch
    count is given); per task by its share of the weights too.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> loaded = NS(recipe=NS(optim=NS(prompts_per_step=8, steps=10)),
        ...             tasks=[NS(spec=NS(id="a"), weight=1.0), NS(spec=NS(id="b"), weight=1.0)])
        >>> for line in data_warnings(loaded, {"a": 100, "b": 6}): print(line)
        task b holds 6 prompts, its weight takes 40 in 10 steps: 6.7 epochs (they repeat)
        >>> data_warnings(loaded, {"a": 3, "b": 2})[0]
        'the tasks hold 5 prompts, fewer than one step needs (optim.prompts_per_step 8)'
    """
    optim = loaded.recipe.optim
    total = sum(samples.values())
    consumed = optim.prompts_per_step * optim.steps
    if total < optim.prompts_per_step:
        return [
            f"the tasks hold {total} prompts, fewer than one step needs "
            f"(optim.prompts_per_step {optim.prompts_per_step})"
        ]
    warnings = []
    if consumed > total:
        warnings.append(
            f"the {optim.steps} steps consume {consumed} prompts, the tasks hold {total}: "
            f"{consumed / total:.1f} epochs (prompts repeat)"
        )
    weights = sum(entry.weight for entry in loaded.tasks)
    for entry in loaded.tasks:
        share = consumed * entry.weight / weights if weights else 0
        held = samples.get(entry.spec.id, 0)
        if held and share > held and consumed <= total:
            warnings.append(
                f"task {entry.spec.id} holds {held} prompts, its weight takes {share:.0f} in "
                f"{optim.steps} steps: {share / held:.1f} epochs (they repeat)"
            )
    return warnings


def recipe_warnings(path: str | Path) -> tuple[str, list[str]]:
    """``validate`` for a recipe: its id (raising :class:`SpecError` like ``load_recipe``) and,
    when its store is built, :func:`data_warnings` over the store's ready samples.

    Example:
        >>> recipe_warnings("recipes/tiny-grpo.yaml")[0]
        'tiny-grpo'
    """
    loaded = load_recipe(path)
    store = loaded.resolve(loaded.recipe.store)
    if not store.is_dir():
        return loaded.recipe.id, []
    try:
        samples = {e.spec.id: len(CachedSampleDataset(store, spec=e.spec)) for e in loaded.tasks}
    except UserError:  # not built for these specs yet: `train` says what to build
        return loaded.recipe.id, []
    return loaded.recipe.id, data_warnings(loaded, samples)


def epochs(loaded: LoadedRecipe, samples: dict[str, int]) -> float | None:
    """How many times the recipe's steps go through the tasks' ready prompts (None: none)."""
    total = sum(samples.values())
    optim = loaded.recipe.optim
    return round(optim.prompts_per_step * optim.steps / total, 2) if total else None


def parse_model(value: str, base: Path) -> ModelSource:
    """Read a recipe's ``model``: ``tiny:FAMILY``, ``hf://ORG/NAME[@REV]`` or a folder.

    A relative folder is relative to ``base``.

    Example:
        >>> parse_model("hf://Qwen/Qwen3-VL-8B-Instruct@abc", Path("."))
        ModelSource(kind='hub', name='Qwen/Qwen3-VL-8B-Instruct', revision='abc')
        >>> parse_model("tiny:qwen3-vl", Path(".")).kind
        'tiny'
    """
    if value.startswith(TINY_PREFIX):
        return ModelSource("tiny", value[len(TINY_PREFIX) :])
    if value.startswith(HF_SCHEME):
        repo, _, revision = value[len(HF_SCHEME) :].partition("@")
        return ModelSource("hub", repo, revision or None)
    path = Path(value).expanduser()
    return ModelSource("local", str(path if path.is_absolute() else base / path))


def local_patch_factor(folder: Path) -> int | None:
    """The resize factor (patch × merge) a local model's saved processor uses, if it says.

    Example:
        >>> local_patch_factor(Path("no-such-folder")) is None
        True
    """
    for name in ("processor_config.json", "preprocessor_config.json"):
        path = folder / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        image = data.get("image_processor", data)
        patch, merge = image.get("patch_size"), image.get("merge_size")
        if isinstance(patch, int) and isinstance(merge, int):
            return patch * merge
    return None


def check_patch_factor(loaded: LoadedRecipe, model: ModelSource, factor: int | None) -> None:
    """Refuse tasks whose frames were cached for another resize factor than the model's.

    ``factor`` is the model processor's patch × merge (None: unknown, nothing to check).
    """
    for entry in loaded.tasks:
        for modality in ("video", "image"):
            patch = getattr(entry.spec.budget, modality).patch
            if factor is not None and patch != factor:
                raise UserError(
                    f"task {entry.spec.id}: budget.{modality}.patch {patch} does not fit model "
                    f"{model.describe()} (resize factor {factor}); set `patch: {factor}` in "
                    f"{entry.spec.source_file} and build the cache again"
                )


def _check_model(loaded: LoadedRecipe, model: ModelSource) -> None:
    if model.kind == "hub":
        return  # fetched, then checked, by the backend
    if model.kind == "tiny":
        check_patch_factor(loaded, model, patch_factor(model.name))
        return
    folder = Path(model.name)
    if not (folder / "config.json").is_file():
        what = "does not exist" if not folder.exists() else "has no config.json"
        raise UserError(f"model {model.name}: {what} (recipe {loaded.path})")
    check_patch_factor(loaded, model, local_patch_factor(folder))


def check_task_store(spec: Any, store: Path) -> int:
    """Ready samples of one task in ``store``, checked against the spec's budgets and the
    cached frames; raises :class:`UserError` (the store, or the task, is not built)."""
    dataset = CachedSampleDataset(store, spec=spec)
    for row in dataset.rows:
        missing = [k for k in (*row["video_keys"], *row["image_keys"]) if k not in dataset.frames]
        if missing:
            raise UserError(
                f"{store}: sample {row['task_id']}/{row['sample_id']} has no cached frames "
                f"({missing[0]}); {rebuild_hint(str(store))}"
            )
    return len(dataset)


def _check_store(loaded: LoadedRecipe, store: Path) -> dict[str, int]:
    """Ready samples per task, each checked against its spec's budgets and the cached frames."""
    return {entry.spec.id: check_task_store(entry.spec, store) for entry in loaded.tasks}


def _check_offline(loaded: LoadedRecipe, store: Path) -> None:
    """A recipe's ``offline:`` section against the store it trains on (one line a problem)."""
    if loaded.recipe.offline is None:
        return
    task_ids = [entry.spec.id for entry in loaded.tasks]
    problems, _ = store_problems(store, loaded.recipe.offline, task_ids)
    if problems:
        lines = [f"{loaded.path}: {path}: {message}" for path, message in problems]
        raise UserError("\n".join(lines))


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(data, dict):
        return {prefix: data}
    flat: dict[str, Any] = {}
    for key, value in data.items():
        flat |= _flatten(value, f"{prefix}.{key}" if prefix else str(key))
    return flat


def plan_only(output_dir: Path) -> bool:
    """Whether ``output_dir`` holds only what ``train --plan`` wrote (its ``plan.json``).

    Example:
        >>> plan_only(Path("no-such-run"))
        False
    """
    if not output_dir.is_dir():
        return False
    names = {p.name for p in output_dir.iterdir()}
    return names == {PLAN_FILE}


def dry_run_only(output_dir: Path) -> bool:
    """Whether ``output_dir`` holds only what ``train --dry-run`` wrote (nothing trained)."""
    if not (output_dir / DRY_RUN_FILE).is_file():
        return False
    return not any(
        p.name == "metrics.jsonl" or p.name.startswith("checkpoint-") for p in output_dir.iterdir()
    )


def _check_output(loaded: LoadedRecipe, output_dir: Path, resume: bool) -> None:
    saved = output_dir / RESOLVED_RECIPE
    if resume and plan_only(output_dir):
        raise UserError(
            f"--resume: {output_dir} holds a plan only ({PLAN_FILE}), nothing trained yet; run "
            "it again without --resume"
        )
    if resume and dry_run_only(output_dir):
        raise UserError(
            f"--resume: {output_dir} holds a dry run only, nothing trained yet; run it again "
            "without --resume"
        )
    if not resume:
        used = output_dir.exists() and any(output_dir.iterdir())
        if used and not (dry_run_only(output_dir) or plan_only(output_dir)):
            raise UserError(
                f"output folder {output_dir} is not empty; pass --resume to continue the run "
                "in it, or choose another --output"
            )
        return
    if not saved.is_file():
        raise UserError(f"--resume: {output_dir} holds no run ({RESOLVED_RECIPE} is missing)")
    before = _flatten(yaml.safe_load(saved.read_text(encoding="utf-8")))
    now = _flatten(json.loads(json.dumps(loaded.resolved_dict())))
    changed = sorted(
        key
        for key in before.keys() | now.keys()
        if before.get(key) != now.get(key) and not key.startswith(_RESUMABLE)
    )
    if changed:
        raise UserError(
            f"--resume: the recipe differs from the run in {output_dir} in {', '.join(changed)}; "
            "only optim.steps (--max-steps), the store and the output folder may change"
        )


def _check_logging(loaded: LoadedRecipe) -> None:
    for wanted, module, package in (
        (loaded.recipe.logging.tensorboard, "tensorboard", "tensorboard"),
        (loaded.recipe.logging.wandb, "wandb", "wandb"),
    ):
        if wanted and importlib.util.find_spec(module) is None:
            raise UserError(
                f"{loaded.path}: logging.{module} is on but {package} is not installed "
                f"(pip install {package}, or set logging.{module}: false)"
            )


def plan_training(
    recipe: str | Path,
    *,
    backend: str | None = None,
    model: str | None = None,
    store: str | Path | None = None,
    max_steps: int | None = None,
    output: str | Path | None = None,
    resume: bool = False,
    backends: BackendChecks | None = None,
) -> TrainPlan:
    """Load ``recipe``, apply the command line's overrides and check everything; write nothing.

    Paths given here (``store``, ``output``, a ``model`` folder) are relative to the working
    directory; paths in the recipe are relative to the recipe's file. ``backends``: as for
    :func:`~videorl_kit.train.recipe.load_recipe` (the recipe's backend adds its problems).

    Example:
        >>> plan_training("recipes/tiny-grpo.yaml", model="no/such/model")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.core.errors.UserError: model .../no/such/model: does not exist (recipe ...)
    """
    loaded, source, store_dir, output_dir = apply_overrides(
        recipe, backend=backend, model=model, store=store, max_steps=max_steps, output=output,
        backends=backends,
    )  # fmt: skip
    _check_model(loaded, source)
    _check_logging(loaded)
    _check_output(loaded, output_dir, resume)
    samples = _check_store(loaded, store_dir)
    _check_offline(loaded, store_dir)
    return TrainPlan(loaded, source, store_dir, output_dir, resume, samples)


def apply_overrides(
    recipe: str | Path,
    *,
    backend: str | None = None,
    model: str | None = None,
    store: str | Path | None = None,
    max_steps: int | None = None,
    output: str | Path | None = None,
    backends: BackendChecks | None = None,
) -> tuple[LoadedRecipe, ModelSource, Path, Path]:
    """Load ``recipe`` with the command line's overrides: the recipe, its model, its store and
    its output folder (normalised paths). Checks the recipe itself only (with its backend's
    problems when ``backends`` holds that backend).

    Example:
        >>> _, model, store, out = apply_overrides("recipes/tiny-grpo.yaml", max_steps=2)
        >>> model.describe(), store.name, out.parts[-2:]
        ('tiny:qwen2.5-vl', 'store', ('runs', 'tiny-grpo'))
    """
    loaded = load_recipe(recipe, backend=backend, output_dir=output is None, backends=backends)
    if max_steps is not None:
        if max_steps < 1:
            raise UserError(f"--max-steps must be at least 1, not {max_steps}")
        optim = loaded.recipe.optim.model_copy(update={"steps": max_steps})
        loaded = _with_recipe(loaded, optim=optim)
    if model:
        problem = text_problem(model)
        problem = f"{quoted(model)} {problem}" if problem else hf_model_problem(model)
        if problem:
            raise UserError(f"--model: {problem}")
        loaded = _with_recipe(loaded, model=parse_model(model, Path.cwd()).describe())
    source = parse_model(loaded.recipe.model, loaded.path.parent)
    store_dir = Path(store) if store is not None else loaded.resolve(loaded.recipe.store)
    output_dir = Path(output) if output is not None else loaded.resolve(loaded.recipe.output_dir)
    store_dir, output_dir = (Path(os.path.normpath(p)) for p in (store_dir, output_dir))
    if store is not None:
        loaded = _with_recipe(loaded, store=str(store_dir))
    if output is not None:
        loaded = _with_recipe(loaded, output_dir=str(output_dir))
    return loaded, source, store_dir, output_dir


def _with_recipe(loaded: LoadedRecipe, **update: Any) -> LoadedRecipe:
    return replace(loaded, recipe=loaded.recipe.model_copy(update=update))
