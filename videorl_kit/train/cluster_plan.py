"""``train RECIPE --plan``: what a run will need, computed without its store or model files.

A plan is drafted from the recipe alone (:func:`draft_plan`): the model's size (from its
local files, the Hub cache, or :data:`KNOWN_MODELS`), the tasks' ready samples when the store
is built (else the rows of a data file that is already on disk, else unknown), the per-sample
frame and visual-token ceilings of every spec's budget, and what is missing for a full run,
each with the command that provides it. The backend then adds its part
(:class:`BackendPlan`: the argv or config, the cluster sizing, the memory inputs) and
:func:`assemble_plan` puts both together into the record that ``plan.json`` holds.

Nothing here touches the network: Hub files are looked up in the local cache only.

Example:
    >>> draft = draft_plan("recipes/qwen2.5-vl-7b-grpo.yaml", store="no-such-store")
    >>> draft.model_shape.params, draft.samples is None
    (8292166656, True)
    >>> [m.what.split(":")[0] for m in draft.missing]  # a backend may replace the model's
    ['model hf', 'store no-such-store', 'data of video-r1-260k-video, video-r1-260k-image']
"""

from __future__ import annotations

import json
import math
import os
import shlex
import struct
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.core.out_folder import refuse_links
from videorl_kit.hf.client import hub_cache_dir
from videorl_kit.spec.budget import estimate_video
from videorl_kit.spec.data import row_is_kept, spec_rows
from videorl_kit.train.plan import (
    BASE_MODEL_DIR,
    PLAN_FILE,
    ModelSource,
    apply_overrides,
    check_patch_factor,
    check_task_store,
    dry_run_only,
    local_patch_factor,
    plan_only,
)
from videorl_kit.train.recipe import BackendChecks, LoadedRecipe, Recipe
from videorl_kit.train.script_values import path_arg

GIB = 1024**3

TEXT_TOKENS = 512
"""Tokens allowed for a prompt's text (question, options, template, chat markers) on top of
its visual tokens, when the model's processor is not at hand to count them."""

REFERENCE_VIDEO = {"duration_s": 3600.0, "width": 1920, "height": 1080, "source_fps": 30.0}
"""The video whose frame count is a budget's ceiling: long enough that ``max_frames`` binds."""


@dataclass(frozen=True)
class ModelShape:
    """What the memory estimate needs of a model: parameters and the text stack's size."""

    params: int
    hidden: int | None
    layers: int | None
    vocab: int | None
    origin: str


KNOWN_MODELS: dict[str, tuple[int, int, int, int]] = {
    # name prefix (lower case, no org): parameters, hidden size, layers, vocabulary
    "qwen2-vl-2b": (2_208_985_600, 1536, 28, 151936),
    "qwen2-vl-7b": (8_291_375_616, 3584, 28, 152064),
    "qwen2-vl-72b": (73_405_560_320, 8192, 80, 152064),
    "qwen2.5-vl-3b": (3_754_622_976, 2048, 36, 151936),
    "qwen2.5-vl-7b": (8_292_166_656, 3584, 28, 152064),
    "qwen2.5-vl-32b": (33_452_718_336, 5120, 64, 152064),
    "qwen2.5-vl-72b": (73_410_777_344, 8192, 80, 152064),
    "qwen3-vl-2b": (2_127_532_032, 2048, 28, 151936),
    "qwen3-vl-4b": (4_437_815_808, 2560, 36, 151936),
    "qwen3-vl-8b": (8_767_123_696, 4096, 36, 151936),
    "qwen3-vl-30b-a3b": (31_070_754_032, 2048, 48, 151936),
    "qwen3-vl-32b": (33_417_012_224, 5120, 64, 151936),
}
"""Sizes of the released Qwen-VL models (parameters as their safetensors hold them, text
stack from their ``config.json``), for a model whose files are not on this machine."""


def known_model(name: str) -> ModelShape | None:
    """The :data:`KNOWN_MODELS` entry that ``name`` (a repo id or a folder) starts with.

    Example:
        >>> known_model("Qwen/Qwen2.5-VL-7B-Instruct").params
        8292166656
        >>> known_model("my-own-model") is None
        True
    """
    base = name.rstrip("/").rsplit("/", 1)[-1].lower()
    found = [key for key in KNOWN_MODELS if base == key or base.startswith(key + "-")]
    if not found:
        return None
    key = max(found, key=len)
    params, hidden, layers, vocab = KNOWN_MODELS[key]
    return ModelShape(params, hidden, layers, vocab, f"table of known sizes ({key})")


def safetensors_params(folder: Path) -> int | None:
    """Parameters stored in a folder's ``*.safetensors`` files, read from their headers only.

    Example:
        >>> safetensors_params(Path("no-such-folder")) is None
        True
    """
    files = sorted(folder.glob("*.safetensors")) if folder.is_dir() else []
    total = 0
    for path in files:
        try:
            with path.open("rb") as handle:
                (size,) = struct.unpack("<Q", handle.read(8))
                header = json.loads(handle.read(size))
        except (OSError, ValueError, struct.error):
            return None
        for name, entry in header.items():
            if name != "__metadata__":
                total += math.prod(entry.get("shape", []))
    return total or None


def folder_shape(folder: Path) -> ModelShape | None:
    """A local model folder's shape: ``config.json`` (the text stack) and the parameters of
    its safetensors headers (else :data:`KNOWN_MODELS` by the folder's name)."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    text = config.get("text_config") or config
    params = safetensors_params(folder)
    origin = f"{folder}: config.json and safetensors headers"
    if params is None:
        known = known_model(str(config.get("_name_or_path") or folder.name))
        if known is None:
            return None
        params, origin = known.params, f"{folder}/config.json, parameters from the {known.origin}"
    hidden, layers = text.get("hidden_size"), text.get("num_hidden_layers")
    vocab = text.get("vocab_size") or config.get("vocab_size")
    return ModelShape(params, hidden, layers, vocab, origin)


def hub_cached_folder(repo: str, revision: str | None) -> Path | None:
    """The snapshot folder of ``repo`` at ``revision`` in the local Hub cache, if its
    ``config.json`` is there (no network)."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(
        repo, "config.json", cache_dir=hub_cache_dir(), revision=revision or "main"
    )
    return Path(found).parent if isinstance(found, str) else None


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes per GPU of a training step, in GiB, by part (see :func:`memory_per_gpu`)."""

    weights: float
    gradients: float
    optimizer: float
    reference: float
    activations: float
    total: float

    def as_dict(self) -> dict[str, float]:
        """Plain data, rounded to 0.1 GiB."""
        return {k: round(v, 1) for k, v in asdict(self).items()}


def activation_bytes(
    tokens: int, *, hidden: int, layers: int, vocab: int, checkpointing: bool
) -> int:
    """A rough bound of one forward/backward pass's activations, in bytes, for ``tokens``
    tokens (micro-batch × sequence) in bf16 with flash/SDPA attention (no sequence² term).

    Per layer, a transformer keeps about ``34 · tokens · hidden`` bytes (Korthikanti et al.
    2022, "Reducing Activation Recomputation"); with gradient checkpointing it keeps only
    each layer's input (``2 · tokens · hidden``) plus one layer's full set while recomputing.
    The fp32 logits of the log-probs add ``4 · tokens · vocab``. The vision tower is left out.

    Example:
        >>> activation_bytes(1000, hidden=1000, layers=10, vocab=1000, checkpointing=True)
        58000000
        >>> activation_bytes(1000, hidden=1000, layers=10, vocab=1000, checkpointing=False)
        344000000
    """
    per_layer = 34 * tokens * hidden
    kept = layers * 2 * tokens * hidden + per_layer if checkpointing else layers * per_layer
    return kept + 4 * tokens * vocab


def memory_per_gpu(
    params: int,
    *,
    shards: int,
    zero_stage: int,
    adam_offload: bool = False,
    reference: bool = False,
    reference_offload: bool = False,
    activations: int = 0,
) -> MemoryEstimate:
    """An estimate of a GPU's memory while training: mixed-precision AdamW under DeepSpeed
    ZeRO (Rajbhandari et al. 2020), ``shards`` data-parallel GPUs.

    Per parameter: bf16 weights 2 bytes, bf16 gradients 2 bytes, fp32 master weights and the
    two Adam moments 12 bytes. ZeRO-1 divides the 12 by ``shards``, ZeRO-2 the gradients too,
    ZeRO-3 all 16; ``adam_offload`` moves the 12 to CPU memory. A reference model (a KL term)
    adds its bf16 weights, divided by ``shards`` under ZeRO-3, none when offloaded.
    ``activations`` (bytes, :func:`activation_bytes`) come on top. An estimate: allocator
    fragmentation, communication buffers and the CUDA context (1-3 GiB) are not counted.

    Example (8e9 parameters on 8 GPUs):
        >>> memory_per_gpu(8_000_000_000, shards=8, zero_stage=3).total
        14.9
        >>> memory_per_gpu(8_000_000_000, shards=8, zero_stage=2, reference=True).as_dict()
        {'weights': 14.9, 'gradients': 1.9, 'optimizer': 11.2, 'reference': 14.9, \
'activations': 0.0, 'total': 42.8}
    """
    n = max(1, shards)
    weights, gradients, optimizer = 2.0 * params, 2.0 * params, 12.0 * params
    if zero_stage >= 1:
        optimizer /= n
    if zero_stage >= 2:
        gradients /= n
    if zero_stage >= 3:
        weights /= n
    if adam_offload:
        optimizer = 0.0
    ref = 0.0
    if reference and not reference_offload:
        ref = 2.0 * params / (n if zero_stage >= 3 else 1)
    parts = [weights / GIB, gradients / GIB, optimizer / GIB, ref / GIB, activations / GIB]
    return MemoryEstimate(*(round(p, 1) for p in parts), total=round(sum(parts), 1))


@dataclass(frozen=True)
class Missing:
    """One thing a full run still needs, and the command that provides it."""

    what: str
    command: str


@dataclass(frozen=True)
class TaskBudget:
    """The per-sample ceiling of one task's budget: frames and visual tokens."""

    task: str
    max_frames: int
    video_tokens: int
    image_tokens: int

    @property
    def max_visual_tokens(self) -> int:
        """One video or one image per sample, whichever is larger."""
        return max(self.video_tokens, self.image_tokens)


def task_budget(spec: Any, video_path: str) -> TaskBudget:
    """The most frames and visual tokens one sample of ``spec`` can carry under its budget:
    one video (frames from :func:`~videorl_kit.spec.budget.estimate_video` for an hour-long
    clip, so that ``max_frames`` binds; at most ``max_pixels``, and ``total_pixels`` over the
    frames, per frame, whatever the aspect ratio) or one image (``max_pixels``).
    ``video_path`` ``native`` merges ``temporal_patch`` frames into one patch;
    ``frames_as_images`` sends every frame as an image, twice the tokens.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> from videorl_kit.core.budget import ImageBudget, VideoBudget
        >>> spec = NS(id="t", budget=NS(video=VideoBudget(max_frames=16, max_pixels=100352),
        ...                             image=ImageBudget(max_pixels=1003520)))
        >>> b = task_budget(spec, "native")
        >>> b.max_frames, b.video_tokens, b.image_tokens
        (16, 1024, 1280)
        >>> task_budget(spec, "frames_as_images").video_tokens
        2048
    """
    video_budget, image_budget = spec.budget.video, spec.budget.image
    frames = estimate_video(video_budget, **REFERENCE_VIDEO).frames
    pixels = video_budget.max_pixels
    if video_budget.total_pixels is not None:
        pixels = min(pixels, video_budget.total_pixels // frames)
    per_patch = pixels // video_budget.patch**2
    if video_path == "native":
        tokens = -(-frames // video_budget.temporal_patch) * per_patch
    else:
        tokens = frames * per_patch
    image = image_budget.max_pixels // image_budget.patch**2
    return TaskBudget(spec.id, frames, tokens, image)


@dataclass
class PlanDraft:
    """The backend-independent part of a plan (see the module docstring)."""

    loaded: LoadedRecipe
    model: ModelSource
    store: Path
    output_dir: Path
    samples: dict[str, int] | None
    sample_source: str
    model_shape: ModelShape | None
    model_folder: Path | None
    budgets: list[TaskBudget]
    missing: list[Missing] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    model_missing: Missing | None = None
    """The item of ``missing`` for a Hub model not in the local cache (a backend with its own
    way to fetch the model replaces it: :meth:`replace_model_missing`)."""

    @property
    def recipe(self) -> Recipe:
        """The recipe, overrides applied."""
        return self.loaded.recipe

    def replace_model_missing(self) -> None:
        """Drop the draft's generic Hub-model item from ``missing``: the backend's own part
        says how to get the model (OpenRLHF: pin, download, point ``model`` at the folder)."""
        if self.model_missing in self.missing:
            self.missing.remove(self.model_missing)
        self.model_missing = None

    @property
    def backend(self) -> str:
        """The backend the plan is for."""
        return self.loaded.backend

    def epochs(self) -> float | None:
        """Passes over the tasks' prompts the steps make (None: sample count unknown)."""
        if not self.samples or not sum(self.samples.values()):
            return None
        optim = self.recipe.optim
        return round(optim.steps * optim.prompts_per_step / sum(self.samples.values()), 2)

    def use_video_path(self, video_path: str) -> None:
        """Recompute the task budgets for the backend's video path (``native`` or
        ``frames_as_images``)."""
        self.budgets = [task_budget(entry.spec, video_path) for entry in self.loaded.tasks]

    def max_prompt_tokens(self) -> int:
        """The prompt-length ceiling: the largest sample's visual tokens + :data:`TEXT_TOKENS`."""
        return max(b.max_visual_tokens for b in self.budgets) + TEXT_TOKENS


@dataclass
class BackendPlan:
    """A backend's part of a plan: how it launches, on how many GPUs, with what memory."""

    launch: dict[str, Any]
    sizing: dict[str, Any]
    shards: int
    zero_stage: int
    micro_batch: int
    checkpointing: bool
    adam_offload: bool = False
    reference_offload: bool = False
    placeholders: dict[str, dict[str, Any]] = field(default_factory=dict)
    missing: list[Missing] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _spec_files(loaded: LoadedRecipe, ids: list[str] | None = None) -> list[str]:
    return [
        os.path.normpath(str(entry.spec.source_file or entry.given_as))
        for entry in loaded.tasks
        if ids is None or entry.spec.id in ids
    ]


def _build_cache(files: list[str], store: Path) -> str:
    """The ``build-cache`` command line of ``files`` into ``store``, every word quoted."""
    words = [path_arg(f) for f in files]
    return shlex.join(["videorl-kit", "build-cache", *words, "--store", str(store)])


def _count_rows(spec: Any) -> int | None:
    """Rows of a spec's data file that pass ``data.where`` (``data.limit`` applied), when the
    file is already on this machine; None otherwise (nothing is downloaded)."""
    if spec.data.hub is not None:
        from huggingface_hub import try_to_load_from_cache

        hub = spec.data.hub
        found = try_to_load_from_cache(
            hub.repo,
            hub.file,
            cache_dir=hub_cache_dir(),
            revision=hub.revision,
            repo_type="dataset",
        )
        if not isinstance(found, str):
            return None
        path = Path(found)
    else:
        path = spec.resolve(spec.data.path, field="data.path")
        if not path.is_file():
            return None
    if spec.eval is not None and spec.eval.annotations:
        return None  # a benchmark layout: rows are mapped before filtering
    count = 0
    try:
        for _, row in spec_rows(spec, path):
            if spec.data.where and not row_is_kept(spec, row):
                continue
            count += 1
            if spec.data.limit is not None and count >= spec.data.limit:
                break
    except UserError:
        return None
    return count


def _store_samples(draft: PlanDraft) -> None:
    """Ready samples per task from a built store; what is not built goes to ``missing``."""
    loaded, store = draft.loaded, draft.store
    if not store.is_dir():
        draft.missing.append(
            Missing(
                f"store {store}: not built",
                _build_cache(_spec_files(loaded), store),
            )
        )
        return
    counts: dict[str, int] = {}
    unbuilt: list[str] = []
    for entry in loaded.tasks:
        try:
            counts[entry.spec.id] = check_task_store(entry.spec, store)
        except UserError as exc:
            unbuilt.append(entry.spec.id)
            draft.notes.append(f"task {entry.spec.id}: {exc}")
    if unbuilt:
        draft.missing.append(
            Missing(
                f"store {store}: tasks not cached: {', '.join(unbuilt)}",
                _build_cache(_spec_files(loaded, unbuilt), store),
            )
        )
        return
    draft.samples, draft.sample_source = counts, f"ready samples in the store {store}"


def _data_samples(draft: PlanDraft) -> None:
    """Without a store: rows of the data files already on disk (before media checks)."""
    counts: dict[str, int] = {}
    absent: dict[tuple[str, str], list[str]] = {}  # (what, command) -> tasks
    for entry in draft.loaded.tasks:
        n = _count_rows(entry.spec)
        if n is not None:
            counts[entry.spec.id] = n
            continue
        hub = entry.spec.data.hub
        if hub is not None:
            key = (
                f"{hub.uri} not in the local Hub cache",
                shlex.join(
                    [
                        "hf",
                        "download",
                        hub.repo,
                        "--repo-type",
                        "dataset",
                        "--revision",
                        hub.revision,
                        "--",  # the file, even one named like an option, is a file
                        hub.file,
                    ]
                ),
            )
        else:
            path = os.path.normpath(entry.spec.resolve(entry.spec.data.path, field="data.path"))
            key = (
                f"{path} not found",
                "put the data file in place (see "
                f"{shlex.quote(os.path.normpath(str(entry.spec.source_file)))})",
            )
        absent.setdefault(key, []).append(entry.spec.id)
    for (what, command), tasks in absent.items():
        draft.missing.append(Missing(f"data of {', '.join(tasks)}: {what}", command))
    if not absent:
        draft.samples = counts
        draft.sample_source = (
            "rows of the data files (before media checks; the store may hold fewer)"
        )


def _model_info(draft: PlanDraft) -> None:
    model = draft.model
    if model.kind == "tiny":
        folder = draft.output_dir / BASE_MODEL_DIR
        draft.notes.append(f"model {model.describe()}: the run writes it into {folder}")
        draft.model_shape = folder_shape(folder)  # a dry run may have written it already
        return
    if model.kind == "local":
        folder = Path(model.name)
        download = f"hf download ORG/NAME --revision REV --local-dir {shlex.quote(model.name)}"
        if not (folder / "config.json").is_file():
            draft.missing.append(
                Missing(f"model {model.name}: no config.json (not downloaded)", download)
            )
        else:
            draft.model_folder = folder
            try:  # the run refuses specs cached for another resize factor
                check_patch_factor(draft.loaded, model, local_patch_factor(folder))
            except UserError as exc:
                draft.missing.append(Missing(str(exc), "set the specs' patch, then build-cache"))
            if local_patch_factor(folder) is None:
                draft.missing.append(
                    Missing(
                        f"model {model.name}: no processor files (preprocessor_config.json): "
                        "download the processor's files with the weights",
                        download,
                    )
                )
        draft.model_shape = (folder_shape(folder) if draft.model_folder else None) or known_model(
            model.name
        )
        return
    cached = hub_cached_folder(model.name, model.revision)
    if cached is not None:
        draft.model_folder = cached
        draft.model_shape = folder_shape(cached)
    else:
        rev = ["--revision", model.revision] if model.revision else []
        what = f"model {model.describe()}: not in the local Hub cache"
        draft.model_missing = Missing(what, shlex.join(["hf", "download", model.name, *rev]))
        draft.missing.append(draft.model_missing)
    draft.model_shape = draft.model_shape or known_model(model.name)


def draft_plan(
    recipe: str | Path,
    *,
    backend: str | None = None,
    model: str | None = None,
    store: str | Path | None = None,
    max_steps: int | None = None,
    output: str | Path | None = None,
    backends: BackendChecks | None = None,
) -> PlanDraft:
    """The backend-independent part of ``train --plan``: it needs the recipe and its specs
    only (no store, no model files, no network). Raises :class:`UserError` or ``SpecError``
    for a recipe that is wrong in itself or, given ``backends``, for its backend (as ``train``
    does).
    """
    loaded, source, store_dir, output_dir = apply_overrides(
        recipe, backend=backend, model=model, store=store, max_steps=max_steps, output=output,
        backends=backends,
    )  # fmt: skip
    # native until the backend's plan says which video path it takes (use_video_path)
    budgets = [task_budget(entry.spec, "native") for entry in loaded.tasks]
    draft = PlanDraft(loaded, source, store_dir, output_dir, None, "unknown", None, None, budgets)
    _model_info(draft)
    _store_samples(draft)
    if draft.samples is None:
        _data_samples(draft)
    used = output_dir.exists() and any(output_dir.iterdir())
    if used and not (dry_run_only(output_dir) or plan_only(output_dir)):
        draft.notes.append(
            f"output folder {output_dir} holds a run: the real run needs --resume "
            "or another --output"
        )
    return draft


def assemble_plan(draft: PlanDraft, part: BackendPlan) -> dict[str, Any]:
    """The whole plan as plain data (what ``plan.json`` holds and ``--json`` prints)."""
    recipe = draft.recipe
    optim, rollout = recipe.optim, recipe.rollout
    completions = optim.prompts_per_step * rollout.group_size
    max_frames = max(b.max_frames for b in draft.budgets)
    visual = max(b.max_visual_tokens for b in draft.budgets)
    prompt_tokens = draft.max_prompt_tokens()
    sequence = prompt_tokens + rollout.max_new_tokens
    shape = draft.model_shape
    memory: dict[str, Any] = {"estimate": True, "model": None}
    if shape is not None:
        act = None
        if shape.hidden and shape.layers and shape.vocab:
            act = activation_bytes(
                part.micro_batch * sequence,
                hidden=shape.hidden,
                layers=shape.layers,
                vocab=shape.vocab,
                checkpointing=part.checkpointing,
            )
        estimate = memory_per_gpu(
            shape.params,
            shards=part.shards,
            zero_stage=part.zero_stage,
            adam_offload=part.adam_offload,
            reference=draft.loaded.params.get("kl_coef", 0) > 0,
            reference_offload=part.reference_offload,
            activations=act or 0,
        )
        memory = {
            "estimate": True,
            "model": {
                "params": shape.params,
                "params_b": round(shape.params / 1e9, 2),
                "hidden": shape.hidden,
                "layers": shape.layers,
                "vocab": shape.vocab,
                "from": shape.origin,
            },
            "per_gpu_gib": estimate.as_dict(),
            "activations_known": act is not None,
            "inputs": {
                "data_parallel_gpus": part.shards,
                "zero_stage": part.zero_stage,
                "adam_offload": part.adam_offload,
                "micro_batch": part.micro_batch,
                "sequence_tokens": sequence,
                "gradient_checkpointing": part.checkpointing,
                "reference_model": draft.loaded.params.get("kl_coef", 0) > 0,
            },
            "formula": "weights 2P + gradients 2P + AdamW 12P bytes (ZeRO-1 shards the 12P, "
            "ZeRO-2 also the gradients, ZeRO-3 all; Adam offload drops the 12P), "
            "+ reference 2P (sharded under ZeRO-3), + activations (34·t·h per layer, "
            "2·t·h with checkpointing, + 4·t·V logits; t = micro-batch × sequence)",
        }
    epochs = draft.epochs()
    return {
        "recipe": str(draft.loaded.path),
        "recipe_id": recipe.id,
        "backend": draft.backend,
        "model": draft.model.describe(),
        "store": str(draft.store),
        "output_dir": str(draft.output_dir),
        "launch": part.launch,
        "placeholders": part.placeholders,
        "sizing": part.sizing,
        "steps": {
            "steps": optim.steps,
            "prompts_per_step": optim.prompts_per_step,
            "prompts_consumed": optim.steps * optim.prompts_per_step,
            "samples": None if draft.samples is None else sum(draft.samples.values()),
            "samples_per_task": draft.samples,
            "samples_from": draft.sample_source,
            "epochs": "unknown" if epochs is None else epochs,
        },
        "budget": {
            "prompts_per_step": optim.prompts_per_step,
            "group_size": rollout.group_size,
            "completions_per_step": completions,
            "max_frames_per_sample": max_frames,
            "max_visual_tokens_per_sample": visual,
            "max_prompt_tokens": prompt_tokens,
            "max_completion_tokens": rollout.max_new_tokens,
            "max_tokens_per_step": completions * sequence,
            "max_frames_per_step": optim.prompts_per_step * max_frames,
            "per_task": [
                {
                    "task": b.task,
                    "max_frames": b.max_frames,
                    "video_tokens": b.video_tokens,
                    "image_tokens": b.image_tokens,
                }
                for b in draft.budgets
            ],
            "assumes": "one video (max_frames frames of max_pixels) or one image (max_pixels) "
            "per sample, and "
            f"{TEXT_TOKENS} text tokens per prompt",
        },
        "memory": memory,
        "missing": [asdict(m) for m in [*draft.missing, *part.missing]],
        "notes": [*draft.notes, *part.notes],
    }


def write_plan(record: dict[str, Any], output_dir: Path) -> Path:
    """Write ``plan.json`` into ``output_dir`` (created); returns its path."""
    refuse_links(output_dir, f"the run folder {output_dir}")
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / PLAN_FILE
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path
