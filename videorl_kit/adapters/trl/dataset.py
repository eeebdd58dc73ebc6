"""The TRL training set: ready samples of the store, their frames read from the cache per access.

:func:`build_train_dataset` makes one ``datasets.Dataset`` of the ready samples of every task,
mixed by the recipe's weights (``datasets.interleave_datasets`` with probabilities
weight / sum, every task seen at least once). Its rows hold only text and cache keys; a
``set_transform`` turns each accessed batch into TRL's layout:

* ``prompt``: the chat messages. With ``trl.video: frames_as_images`` (TRL 1.16's GRPO has no
  video path of its own) each video becomes its cached frames, one image per frame, each
  after a text item with the frame's timestamp (``<2.5 seconds>``, Qwen3-VL's own marker),
  then the sample's images, then the rendered task prompt. With ``native`` (the default for
  Qwen2.5-VL and Qwen3-VL) the rows are built by
  :class:`~videorl_kit.adapters.trl.native_video.NativeVideoPrompts` instead (one video part
  per video, the media under ``media``) for the kit's trainer subclass;
* ``images``: the frames and images as PIL images, read from the Lance cache
  (:class:`~videorl_kit.store.FrameStore`; never decoded again);
* ``task_id``, ``sample_id``, ``problem_type``, ``answer``, ``options``: what the reward
  functions receive as keyword columns.

Frames keep the size they were cached at (the video budget's pixels for frames, the image
budget's for images): :func:`keep_cached_sizes` widens the processor's resize bounds so no
cached frame is resized again.

Example:
    >>> import tempfile
    >>> from videorl_kit.train.demo import write_demo_recipe
    >>> from videorl_kit.train.plan import plan_training
    >>> dataset = build_train_dataset(plan_training(write_demo_recipe(tempfile.mkdtemp())))
    >>> row = dataset[0]
    >>> [part.get("text", "<image>") for part in row["prompt"][-1]["content"]][:4]
    ['<0.0 seconds>', '<image>', '<1.2 seconds>', '<image>']
    >>> row["task_id"], len(row["images"]), row["images"][0].size
    ('demo', 4, (112, 84))
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from videorl_kit.adapters.trl.native_video import NativeVideoPrompts
from videorl_kit.core.problem_types import FROM_ROW
from videorl_kit.media.chat import frame_messages
from videorl_kit.spec import load_spec
from videorl_kit.store import CachedFrames, CachedSampleDataset, FrameStore
from videorl_kit.train.plan import TrainPlan

COLUMNS = ("task_id", "sample_id", "problem_type", "answer", "options", "prompt", "system_prompt",
           "video_keys", "image_keys", "breakdown")  # fmt: skip
"""Columns of a dataset row (the ``samples`` table's, minus the statistics, plus the values
the metrics are broken down by)."""

PASSED_COLUMNS = ("task_id", "sample_id", "problem_type", "answer", "options", "breakdown")
"""Columns the reward functions receive as keyword arguments."""

FrameSource = Callable[[Sequence[str]], list[CachedFrames]]
"""Looks up cached media items by cache key (the cache; the benchmark swaps in a decoder)."""


class FramePrompts:
    """The ``set_transform`` that reads a batch's frames and builds its prompts.

    The frame store is opened on first use, in the process that reads the batch.
    """

    def __init__(self, store_dir: Path, source: FrameSource | None = None):
        self.store_dir = Path(store_dir)
        self._source = source

    def _frames(self, keys: Sequence[str]) -> list[CachedFrames]:
        if self._source is None:
            self._source = FrameStore.open(self.store_dir).get_many
        return self._source(list(keys))

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        from PIL import Image

        out: dict[str, list[Any]] = {key: batch[key] for key in PASSED_COLUMNS}
        out["prompt"], out["images"] = [], []
        for index in range(len(batch["task_id"])):
            row = {key: batch[key][index] for key in COLUMNS}
            images = [image.frames[0] for image in self._frames(row["image_keys"])]
            messages, pictures = frame_messages(
                row["prompt"], row["system_prompt"], self._frames(row["video_keys"]), images
            )
            out["prompt"].append(messages)
            out["images"].append([Image.fromarray(np.ascontiguousarray(p)) for p in pictures])
        return out


def breakdown_values(row: dict[str, Any], columns: Sequence[str], mixed: bool) -> str | None:
    """The JSON text of a sample row's values of the breakdown ``columns``: ``problem_type``
    from the row's resolved type (only for a ``from_row`` task, where it varies), any other
    column from the source data row; missing values are left out (None: nothing to log).

    Example:
        >>> row = {"problem_type": "ocr", "row_json": '{"data_source": "textvqa", "x": 1}'}
        >>> breakdown_values(row, ["problem_type", "data_source", "nope"], mixed=True)
        '{"problem_type": "ocr", "data_source": "textvqa"}'
        >>> breakdown_values(row, ["problem_type"], mixed=False) is None
        True
    """
    source = json.loads(row["row_json"]) if row.get("row_json") else {}
    values: dict[str, Any] = {}
    for column in columns:
        if column == "problem_type":
            if mixed:
                values[column] = row["problem_type"]
        elif source.get(column) is not None and not isinstance(source[column], dict | list):
            values[column] = source[column]
    return json.dumps(values) if values else None


DEFAULT_BREAKDOWN = ("problem_type", "data_source")
"""The columns metrics are broken down by unless a recipe's ``logging.breakdown`` says."""


def _spec_rows(store: Path, spec: Any, columns: Sequence[str]) -> list[dict[str, Any]]:
    dataset = CachedSampleDataset(store, spec=spec)
    mixed = spec.problem_type == FROM_ROW
    return [
        {
            **{key: row[key] for key in COLUMNS if key != "breakdown"},
            "breakdown": breakdown_values(row, columns, mixed),
        }
        for row in dataset.rows
    ]


def task_rows(plan: TrainPlan) -> dict[str, list[dict[str, Any]]]:
    """Each task's ready sample rows (budgets checked against its spec), by task id."""
    columns = plan.recipe.logging.breakdown
    return {e.spec.id: _spec_rows(plan.store, e.spec, columns) for e in plan.loaded.tasks}


def _mixed_rows(
    per_task: Sequence[list[dict[str, Any]]], weights: Sequence[float], seed: int
) -> Any:
    """One ``Dataset`` of the tasks' rows, interleaved by weight (each task seen once at least)."""
    from datasets import Dataset, Features, Sequence, Value, interleave_datasets

    features = Features({
        "task_id": Value("string"), "sample_id": Value("string"),
        "problem_type": Value("string"), "answer": Value("string"),
        "options": Sequence(Value("string")), "prompt": Value("string"),
        "system_prompt": Value("string"), "video_keys": Sequence(Value("string")),
        "image_keys": Sequence(Value("string")), "breakdown": Value("string"),
    })  # fmt: skip
    parts = [Dataset.from_list(rows, features=features) for rows in per_task]
    if len(parts) == 1:
        return parts[0]
    return interleave_datasets(
        parts,
        probabilities=[w / sum(weights) for w in weights],
        seed=seed,
        stopping_strategy="all_exhausted",
    )


def build_train_dataset(
    plan: TrainPlan, source: FrameSource | None = None, *, video: str = "frames_as_images"
) -> Any:
    """The mixed, lazily framed ``datasets.Dataset`` of ``plan``'s tasks (see the module doc).

    ``video="native"`` gives rows for the native video path instead
    (:class:`~videorl_kit.adapters.trl.native_video.NativeVideoPrompts`: one video part per
    video, the cached media under ``media``).
    """
    per_task = task_rows(plan)
    mixed = _mixed_rows(
        [per_task[e.spec.id] for e in plan.loaded.tasks],
        [e.weight for e in plan.loaded.tasks],
        plan.recipe.seed,
    )
    if video == "native":
        mixed.set_transform(NativeVideoPrompts(plan.store, source, PASSED_COLUMNS))
    else:
        mixed.set_transform(FramePrompts(plan.store, source))
    return mixed


def grpo_dataset(
    specs: Sequence[Any],
    store: str | Path,
    *,
    weights: Sequence[float] | None = None,
    seed: int = 0,
    breakdown: Sequence[str] = DEFAULT_BREAKDOWN,
) -> Any:
    """The kit's cached samples as a ``datasets.Dataset`` for your own TRL ``GRPOTrainer``.

    ``specs`` are task specs (loaded, or paths of spec files) whose samples ``store`` holds
    (``videorl-kit build-cache``); ``weights`` mix them (default: equal), every task seen
    once at least. Each row, read lazily from the Lance cache, is what TRL's GRPO takes:
    ``prompt`` (chat messages, each video as its cached frames, one image per frame after a
    ``<t seconds>`` marker), ``images`` (PIL images) and the columns the kit's reward
    functions (:func:`~videorl_kit.rewards.trl_functions.trl_reward_functions`) read:
    ``task_id``, ``sample_id``, ``problem_type``, ``answer``, ``options``, ``breakdown``.
    Pass the processor through :func:`keep_cached_sizes` (with the same specs) so frames are
    not resized again.

    Raises :class:`~videorl_kit.core.errors.UserError` when a spec's samples are not in the
    store under its budget (naming the ``build-cache`` command to run).

    Example:
        >>> import tempfile
        >>> from videorl_kit.train.demo import write_demo_recipe
        >>> from videorl_kit.train.recipe import load_recipe
        >>> loaded = load_recipe(write_demo_recipe(tempfile.mkdtemp()))
        >>> specs = [entry.spec for entry in loaded.tasks]
        >>> dataset = grpo_dataset(specs, loaded.resolve(loaded.recipe.store))
        >>> row = dataset[0]
        >>> row["task_id"], len(row["images"]), row["prompt"][-1]["content"][0]
        ('demo', 4, {'type': 'text', 'text': '<0.0 seconds>'})
    """

    loaded = [load_spec(s) if isinstance(s, str | Path) else s for s in specs]
    given = list(weights) if weights is not None else [1.0] * len(loaded)
    if len(given) != len(loaded) or not loaded or min(given) <= 0:
        raise ValueError(
            f"grpo_dataset: {len(loaded)} specs need as many positive weights, got {given}"
        )
    per_task = [_spec_rows(Path(store), spec, breakdown) for spec in loaded]
    mixed = _mixed_rows(per_task, given, seed)
    mixed.set_transform(FramePrompts(Path(store)))
    return mixed


def keep_cached_sizes(processor: Any, plan: TrainPlan | Sequence[Any]) -> tuple[int, int]:
    """Widen the processor's image resize bounds to every budget of the run (a plan, or the
    task specs given to :func:`grpo_dataset`); return them.

    Each cached frame already fits its own budget (video frames the video budget, images the
    image budget) at a multiple of the resize factor, so with the bounds spanning all
    budgets the processor keeps every frame's size and a run mixing images and videos keeps
    both budgets.
    """
    specs = [e.spec for e in plan.loaded.tasks] if isinstance(plan, TrainPlan) else plan
    budgets = [getattr(spec.budget, modality) for spec in specs for modality in ("video", "image")]
    low = min(b.min_pixels for b in budgets)
    high = max(b.max_pixels for b in budgets)
    processor.image_processor.size = {"shortest_edge": low, "longest_edge": high}
    return low, high
