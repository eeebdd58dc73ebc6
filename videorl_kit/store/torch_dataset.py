"""A map-style dataset of ready samples with their cached frames, for PyTorch training loops.

Each item is one ``ready`` row of the ``samples`` table with its media read from the frames
table. With an HF processor (Qwen2.5-VL / Qwen3-VL) the item is model-ready: the processor
runs with ``do_resize=False`` and ``do_sample_frames=False`` (the cache already sampled and
resized) and receives each video's ``video_metadata`` (source fps and selected frame
indices), so Qwen3-VL writes the right ``<t seconds>`` markers. Without a processor the item
carries the uint8 frames and the metadata.

torch and transformers are imported only when an item is built with a processor;
``torch.utils.data.DataLoader`` accepts the dataset as it is (it implements ``__len__`` and
``__getitem__``).

Example:
    >>> ds = CachedSampleDataset("cache/", processor=processor)   # doctest: +SKIP
    >>> item = ds[0]                                              # doctest: +SKIP
    >>> sorted(item["model_inputs"])                              # doctest: +SKIP
    ['attention_mask', 'input_ids', 'pixel_values_videos', 'video_grid_thw']
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from videorl_kit.media.processor_inputs import processor_outputs
from videorl_kit.store.commit import sql_in
from videorl_kit.store.errors import StoreMismatchError, rebuild_hint
from videorl_kit.store.reader import CachedFrames, FrameStore, budget_dict, require_budget
from videorl_kit.store.samples import STATUS_READY
from videorl_kit.store.schema import SAMPLES_TABLE
from videorl_kit.store.tables import StoreTables

if TYPE_CHECKING:
    from videorl_kit.spec.models import BudgetSpec, TaskSpec

_SAMPLE_COLUMNS = [
    "task_id",
    "sample_id",
    "problem_type",
    "question",
    "options",
    "answer",
    "prompt",
    "system_prompt",
    "video_keys",
    "image_keys",
    "video_budget_hash",
    "image_budget_hash",
    "prompt_tokens_estimate",
]


def processor_factor(processor: Any) -> int | None:
    """The resize factor (patch × merge) a Qwen-VL processor expects, or None if unknown.

    Example:
        >>> class P:  # a stand-in with the two attributes read
        ...     class video_processor:
        ...         patch_size, merge_size = 16, 2
        >>> processor_factor(P())
        32
    """
    video = getattr(processor, "video_processor", None) or getattr(
        processor, "image_processor", None
    )
    patch, merge = getattr(video, "patch_size", None), getattr(video, "merge_size", None)
    return int(patch) * int(merge) if patch and merge else None


def check_sample_budgets(
    tables: StoreTables, budget: BudgetSpec | dict[str, Any], rows: Sequence[dict[str, Any]]
) -> dict[str, str]:
    """Refuse ``rows`` whose media were not cached under ``budget``; return the checked hashes.

    ``budget`` is the trainer's ``BudgetSpec`` (``spec.budget``) or a dict with ``video``
    and ``image`` entries. Each modality the rows use is checked like
    :meth:`FrameStore.open` checks a budget (:func:`~videorl_kit.store.reader.require_budget`:
    the store must hold it), then every row's recorded budget hash must equal it: a store
    may also hold the same task built under another budget. Raises
    :class:`StoreMismatchError` saying which budget to build.

    Example:
        >>> import tempfile
        >>> tables = StoreTables.create(tempfile.mkdtemp())
        >>> check_sample_budgets(tables, {"video": {}, "image": {}}, [])
        {}
    """
    checked: dict[str, str] = {}
    for modality in ("video", "image"):
        used = [row for row in rows if row[f"{modality}_keys"]]
        if not used:
            continue
        part = budget[modality] if isinstance(budget, dict) else getattr(budget, modality)
        expected = require_budget(tables, modality, part)
        column = f"{modality}_budget_hash"
        stale = sorted({(r["task_id"], r[column]) for r in used if r[column] != expected})
        if stale:
            known = tables.budgets()
            found = "; ".join(
                f"task {task} with {digest} "
                f"({json.dumps(known.get(digest, {}).get('budget'), sort_keys=True)})"
                for task, digest in stale
            )
            raise StoreMismatchError(
                f"{tables.root}: samples were cached under another {modality} budget than the "
                f"expected {expected} ({json.dumps(budget_dict(part), sort_keys=True)}): "
                f"{found}; {rebuild_hint(str(tables.root))} with the spec that declares this "
                "budget"
            )
        checked[modality] = expected
    return checked


class CachedSampleDataset:
    """Ready samples of a store with their cached frames (optionally through an HF processor).

    Pass the trainer's task ``spec`` (or its ``budget``) to refuse a store whose frames were
    cached under other budgets: the same check, and message, as ``FrameStore.open(budget=)``.

    Example:
        >>> from torch.utils.data import DataLoader                          # doctest: +SKIP
        >>> ds = CachedSampleDataset("cache/", task_ids=["synth-count"])     # doctest: +SKIP
        >>> loader = DataLoader(ds, batch_size=None, shuffle=True)           # doctest: +SKIP
        >>> next(iter(loader))["video_metadata"][0]["fps"]                   # doctest: +SKIP
        30.0
        >>> spec = load_spec("task_specs/synth-count.yaml")                  # doctest: +SKIP
        >>> len(CachedSampleDataset("cache/", spec=spec)) > 0                # doctest: +SKIP
        True
    """

    def __init__(
        self,
        store_dir: str | Path,
        *,
        task_ids: Sequence[str] | None = None,
        processor: Any | None = None,
        add_generation_prompt: bool = True,
        spec: TaskSpec | None = None,
        budget: BudgetSpec | dict[str, Any] | None = None,
    ):
        """Select the ready samples of ``task_ids`` (default: ``spec.id`` if a spec is given,
        else every task) and check them against ``budget`` (default: ``spec.budget``)."""
        if spec is not None:
            task_ids = list(task_ids) if task_ids is not None else [spec.id]
            budget = budget if budget is not None else spec.budget
        tables = StoreTables.open(store_dir)
        self.frames = FrameStore(tables)
        self.processor = processor
        self.add_generation_prompt = add_generation_prompt
        condition = f"status = '{STATUS_READY}'"
        if task_ids:
            condition += f" AND {sql_in('task_id', list(task_ids))}"
        table = tables.table(SAMPLES_TABLE).to_table(columns=_SAMPLE_COLUMNS, filter=condition)
        rows = sorted(table.to_pylist(), key=lambda r: (r["task_id"], r["sample_id"]))
        self.rows: list[dict[str, Any]] = rows
        if task_ids and not rows:
            raise StoreMismatchError(
                f"{store_dir}: no ready samples for tasks {', '.join(task_ids)}; "
                f"{rebuild_hint(str(store_dir))}"
            )
        self.budget_hashes: dict[str, str] = (
            {} if budget is None else check_sample_budgets(tables, budget, rows)
        )

    def __len__(self) -> int:
        return len(self.rows)

    def _media(self, row: dict[str, Any]) -> tuple[list[CachedFrames], list[CachedFrames]]:
        videos = self.frames.get_many(row["video_keys"])
        images = self.frames.get_many(row["image_keys"])
        for kind, items, expected in (
            ("video", videos, row["video_budget_hash"]),
            ("image", images, row["image_budget_hash"]),
        ):
            for item in items:
                if item.budget_hash != expected:
                    raise StoreMismatchError(
                        f"{self.frames.root}: sample {row['task_id']}/{row['sample_id']} expects "
                        f"{kind} budget {expected} but row {item.cache_key} has "
                        f"{item.budget_hash}; {rebuild_hint(str(self.frames.root))}"
                    )
        return videos, images

    def messages(self, row: dict[str, Any], n_videos: int, n_images: int) -> list[dict[str, Any]]:
        """Chat messages of one sample: optional system turn, then media items and the prompt."""
        content: list[dict[str, Any]] = [{"type": "video"} for _ in range(n_videos)]
        content += [{"type": "image"} for _ in range(n_images)]
        content.append({"type": "text", "text": row["prompt"] or ""})
        messages: list[dict[str, Any]] = []
        if row["system_prompt"]:
            messages.append({"role": "system", "content": row["system_prompt"]})
        messages.append({"role": "user", "content": content})
        return messages

    def __getitem__(self, index: int) -> dict[str, Any]:
        row = self.rows[index]
        videos, images = self._media(row)
        item: dict[str, Any] = {
            "task_id": row["task_id"],
            "sample_id": row["sample_id"],
            "problem_type": row["problem_type"],
            "prompt": row["prompt"],
            "answer": row["answer"],
            "options": row["options"],
            "messages": self.messages(row, len(videos), len(images)),
            "videos": [v.frames for v in videos],
            "video_metadata": [v.video_metadata() for v in videos],
            "images": [i.frames[0] for i in images],
            "prompt_tokens_estimate": row["prompt_tokens_estimate"],
        }
        if self.processor is not None:
            item["model_inputs"] = self._process(item, videos + images)
        return item

    def _process(self, item: dict[str, Any], media: list[CachedFrames]) -> dict[str, Any]:
        factor = processor_factor(self.processor)
        for cached in media:
            if factor is not None and cached.patch != factor:
                raise StoreMismatchError(
                    f"{self.frames.root}: {cached.source_uri} was resized for patch factor "
                    f"{cached.patch} but the processor expects {factor} "
                    f"({json.dumps(cached.budget, sort_keys=True)}); set budget patch: {factor} "
                    f"in the spec and {rebuild_hint(str(self.frames.root))}"
                )
        text = self.processor.apply_chat_template(
            item["messages"], add_generation_prompt=self.add_generation_prompt, tokenize=False
        )
        outputs = processor_outputs(
            self.processor, text, item["videos"], item["video_metadata"], item["images"]
        )
        return {
            key: (
                value[0] if key in ("input_ids", "attention_mask", "mm_token_type_ids") else value
            )
            for key, value in outputs.items()
        }
